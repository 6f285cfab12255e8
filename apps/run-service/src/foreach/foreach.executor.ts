import type { ForeachRunner, StepExecutor } from '../core/run-types';

/**
 * The executor of `foreach` steps (dagu-model §3 foreach; README "foreach"):
 * the items' outcome is the step's, and on success each `collect` name is an
 * output of the step (foreach-runner.ts). The engine registers it with its
 * {@link ForeachRunner}.
 */
export function foreachExecutor(foreach: ForeachRunner): StepExecutor {
  return {
    publishesOutputs: true,
    run: async (ctx, input) => {
      const outcome = await foreach.run(ctx, input.node, input.scope, input.signal, {
        onStdout: input.onStdout,
        onStderr: input.onStderr,
      });
      return {
        ok: outcome.ok,
        ...(outcome.partial === true ? { partial: true } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
        ...(outcome.outputs !== undefined ? { outputs: outcome.outputs } : {}),
        timedOut: false,
        aborted: outcome.aborted,
      };
    },
  };
}
