import { RunStatus } from '@dagu-mcp/contracts';
import { runEventOf, type RunEventPublisher } from '../events/run-event-publisher';
import { setParentStatus } from '../store/run-links.repository';
import type { Queryable } from '../store/run-rows';

/**
 * A parent run shows its child's checkpoint (dagu-model §1 status 7, §8
 * "a run … reaches a waiting checkpoint"): while at least one child run
 * started by one of its `dag.run` steps waits (7) — at a human task or an
 * approval of its own, or because one of *its* children waits — the parent
 * run's status is `waiting` (7) too, with its `RunEvent`; once no child
 * waits any more it is `running` (1) again. Applied level by level, the
 * root of a nested chain waits whenever a descendant waits.
 *
 * Unlike a parked run, such a parent keeps its owner and heartbeat: its
 * `dag.run` step is still executing in the owning replica, which goes on
 * when the child is decided, resumes and ends. The parent's handlers are
 * not touched; its `dag.run` step shows `waiting` (7) meanwhile (dagu-model
 * §3 "Run outcome"; set by the step's executor, `executors/step-try.ts`),
 * and its `subRuns` lead to the waiting child.
 */

/** Tracks, per parent run executing here, which of its children wait; flips the parent between 1 and 7. */
export class ParentWaitTracker {
  private readonly waiting = new Map<number, Set<number>>();

  /**
   * @param deps.childWaits told at every level whether child `childPk` waits now: the engine
   *   shows the parent's `dag.run` step waiting (7) or running meanwhile (dagu-model §3)
   */
  constructor(
    private readonly deps: {
      db: Queryable;
      publisher: RunEventPublisher;
      childWaits?: (childPk: number, waits: boolean) => void;
    },
  ) {}

  /**
   * Records whether child `childPk` of `parent` waits now. When the parent's
   * first child starts waiting it becomes `waiting`; when its last waiting
   * child stops waiting (resumed, ended, stopped) it becomes `running`.
   * Each change is committed, then published, then passed on to the
   * parent's own parent (a nested chain waits up to its root at once).
   */
  async update(parent: { pk: number; attemptNo: number }, childPk: number, childWaits: boolean): Promise<void> {
    this.deps.childWaits?.(childPk, childWaits);
    const set = this.waiting.get(parent.pk) ?? new Set<number>();
    const before = set.size > 0;
    if (childWaits) set.add(childPk);
    else set.delete(childPk);
    if (set.size > 0) this.waiting.set(parent.pk, set);
    else this.waiting.delete(parent.pk);
    const now = set.size > 0;
    if (before === now) return;
    const status = now ? RunStatus.waiting : RunStatus.running;
    const changed = await setParentStatus(this.deps.db, parent, status);
    if (changed === undefined) return;
    await this.deps.publisher.publish(
      runEventOf({ dagName: changed.dag_name, dagRunId: changed.dag_run_id, attemptId: changed.attempt_id }, status),
    );
    if (changed.parent_pk !== null && changed.parent_attempt_no !== null) {
      await this.update({ pk: changed.parent_pk, attemptNo: changed.parent_attempt_no }, parent.pk, now);
    }
  }
}
