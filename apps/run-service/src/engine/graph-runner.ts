import { StepStatus } from '@dagu-mcp/contracts';
import type { NodeSpec, NodeState, RunContext } from '../core/run-types';
import { isStepDone } from '../core/status-rules';
import { runNode } from './step-runner';

/**
 * Schedules the steps of an attempt over their dependency graph
 * (dagu-model §3 `depends`, `type: chain`, `max_active_steps`, `continue_on`).
 *
 * A step becomes ready when every step it depends on is done. Then:
 * - a dependency that failed without an allowing `continue_on`, or that was
 *   aborted → the step is `aborted` without running (Dagu's "cancelled");
 * - else a dependency that was skipped without `continue_on.skipped` → the
 *   step is `skipped` too (and so are its own dependents, unless they allow it);
 * - else it runs, as soon as fewer than `max_active_steps` steps run (0 = no limit).
 * Independent branches go on after a failure. Once `signal` aborts (stop,
 * DAG timeout, shutdown) no further step starts; running steps are killed by
 * their runners and the steps that never started end `aborted`. Steps that
 * are already done when the graph starts (kept by a retry from a step) are
 * not run again.
 */

type Decision = 'wait' | 'run' | 'skip' | 'abort';

function decide(
  node: NodeSpec,
  states: ReadonlyMap<string, NodeState>,
  specs: ReadonlyMap<string, NodeSpec>,
): { decision: Decision; because?: string } {
  let skipBecause: string | undefined;
  for (const dep of node.step.depends) {
    const state = states.get(dep);
    if (state === undefined) continue;
    if (!isStepDone(state.status)) return { decision: 'wait' };
  }
  for (const dep of node.step.depends) {
    const state = states.get(dep);
    if (state === undefined) continue;
    if ((state.status === StepStatus.failed && !state.allowedFailure) || state.status === StepStatus.aborted) {
      return { decision: 'abort', because: dep };
    }
    if (state.status === StepStatus.skipped && specs.get(dep)?.step.continueOn.skipped !== true) skipBecause ??= dep;
  }
  return skipBecause !== undefined ? { decision: 'skip', because: skipBecause } : { decision: 'run' };
}

/**
 * Runs every not-yet-done step of `nodes` (steps only, in execution order).
 * Resolves when no step runs and none can start. Never rejects: an engine
 * failure inside a step marks that step failed.
 */
export function runGraph(
  ctx: RunContext,
  nodes: readonly NodeSpec[],
  states: Map<string, NodeState>,
  signal: AbortSignal,
): Promise<void> {
  const specs = new Map(nodes.map((node) => [node.name, node]));
  const pending = new Set(
    nodes
      .filter((node) => !isStepDone(states.get(node.name)?.status ?? StepStatus.notStarted))
      .map((node) => node.name),
  );
  const running = new Set<string>();
  const maxActive = ctx.dag.maxActiveSteps;
  return new Promise((resolve) => {
    const settle = (
      node: NodeSpec,
      state: NodeState,
      status: typeof StepStatus.aborted | typeof StepStatus.skipped,
      why: string,
    ): void => {
      state.status = status;
      ctx.states.save(node, state);
      ctx.log(`step ${status === StepStatus.skipped ? 'skipped' : 'aborted'}: ${node.name} (${why})`);
    };
    const pump = (): void => {
      let progressed = true;
      while (progressed && !signal.aborted) {
        progressed = false;
        for (const node of nodes) {
          if (!pending.has(node.name)) continue;
          const state = states.get(node.name);
          if (state === undefined) continue;
          const { decision, because } = decide(node, states, specs);
          if (decision === 'wait') continue;
          if (decision === 'run') {
            if (maxActive > 0 && running.size >= maxActive) continue;
            pending.delete(node.name);
            running.add(node.name);
            void runNode(ctx, node, state, signal)
              .catch((error: unknown) => {
                state.status = StepStatus.failed;
                state.error = `internal engine error: ${error instanceof Error ? error.message : String(error)}`;
                state.finishedAt = new Date();
                ctx.states.save(node, state);
              })
              .finally(() => {
                running.delete(node.name);
                pump();
              });
            continue;
          }
          pending.delete(node.name);
          progressed = true;
          if (decision === 'skip') settle(node, state, StepStatus.skipped, `dependency ${because ?? ''} was skipped`);
          else settle(node, state, StepStatus.aborted, `dependency ${because ?? ''} did not succeed`);
        }
      }
      if (running.size > 0) return;
      if (signal.aborted) {
        for (const name of pending) {
          const node = specs.get(name);
          const state = states.get(name);
          if (node !== undefined && state !== undefined)
            settle(node, state, StepStatus.aborted, 'run ended before it started');
        }
        pending.clear();
      }
      resolve();
    };
    pump();
  });
}
