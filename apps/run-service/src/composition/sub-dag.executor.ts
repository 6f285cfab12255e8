import type { StepExecutor, SubDagRunner } from '../core/run-types';

/**
 * The executor of `sub_dag` steps (`dag.run` / `dag.enqueue` / `call`,
 * dagu-model §3): the child run's outcome is the step's (child-runner.ts),
 * and while the child waits at a checkpoint the step shows `waiting` (7).
 * The engine registers it with its {@link SubDagRunner}.
 */
export function subDagExecutor(children: SubDagRunner): StepExecutor {
  return {
    publishesOutputs: true,
    run: async (ctx, input) => {
      const outcome = await children.run(ctx, input.node, input.scope, input.signal, {
        onStdout: input.onStdout,
        onStderr: input.onStderr,
        ...(input.setWaiting !== undefined ? { onWaiting: input.setWaiting } : {}),
      });
      return {
        ok: outcome.ok,
        ...(outcome.partial === true ? { partial: true } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
        timedOut: false,
        aborted: outcome.aborted,
      };
    },
  };
}
