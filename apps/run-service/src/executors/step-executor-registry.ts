import type { StepKind } from '@dagu-mcp/dag-spec';
import type { StepExecutor, StepExecutors } from '../core/run-types';
import { describeStepKind, isStepKind, STEP_KINDS } from '../core/step-kinds';

/**
 * The step-kind executor registry. The engine fills it when it is built —
 * the built-in executors (shell, script, http, human task, approval), then
 * composition (sub-DAG) and foreach register theirs — and checks it complete
 * before it runs anything: a kind the spec model can produce with no executor
 * fails the start, never a run. A step is always run by the executor of its
 * own kind; nothing falls back to the shell path.
 */
export class StepExecutorRegistry implements StepExecutors {
  private readonly executors = new Map<StepKind, StepExecutor>();

  /**
   * Registers the executor of `kind`.
   * @throws Error for a kind the spec model does not know, or one registered twice
   */
  register(kind: string, executor: StepExecutor): this {
    if (!isStepKind(kind))
      throw new Error(`cannot register an executor for unknown step kind "${kind}" (known: ${STEP_KINDS.join(', ')})`);
    if (this.executors.has(kind)) throw new Error(`step kind "${kind}" already has an executor`);
    this.executors.set(kind, executor);
    return this;
  }

  /**
   * Checks that every step kind has an executor (called at engine start-up).
   * @throws Error naming the kinds without one
   */
  assertComplete(): void {
    const missing = STEP_KINDS.filter((kind) => !this.executors.has(kind));
    if (missing.length === 0) return;
    const list = missing.map((kind) => `${kind} (${describeStepKind(kind)})`).join(', ');
    throw new Error(`run engine: no executor registered for step kind${missing.length > 1 ? 's' : ''} ${list}`);
  }

  /** @throws Error when `kind` has no executor (unreachable once {@link assertComplete} passed). */
  executorOf(kind: StepKind): StepExecutor {
    const executor = this.executors.get(kind);
    if (executor === undefined) throw new Error(`no executor registered for step kind "${kind}"`);
    return executor;
  }
}
