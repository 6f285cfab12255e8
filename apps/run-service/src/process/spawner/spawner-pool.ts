import type { SpawnOptions, StepChild, StepSpawner } from '../../core/step-launch';

/** A pool member: a spawner that says how many of its children are still open. */
export interface CountedSpawner extends StepSpawner {
  /** Children started and not yet closed. */
  readonly open: number;
}

/**
 * Several step spawners used in turn (`RUN_STEP_SPAWNERS`): a
 * spawner forks one step process at a time and its thread is blocked while
 * the fork runs (about 1.4 ms here), so one spawner caps a replica near 700
 * step starts a second however many cores it has. Each member keeps its own
 * guarantees (process-spawner.ts): it kills what it started when run-service
 * goes, and its steps fail if it dies.
 */
export class SpawnerPool implements StepSpawner {
  /** @param members the spawners, at least one */
  constructor(private readonly members: readonly CountedSpawner[]) {
    if (members.length === 0) throw new Error('a spawner pool needs at least one spawner');
  }

  /**
   * Starts `file args` in the member with the fewest open children, the
   * first of those on a tie: steps one at a time (a chain) stay on one warm
   * spawner, concurrent ones spread. Never throws, as {@link StepSpawner.spawn}.
   */
  spawn(file: string, args: readonly string[], opts: SpawnOptions): StepChild {
    let best = this.members[0]!;
    for (const member of this.members) if (member.open < best.open) best = member;
    return best.spawn(file, args, opts);
  }
}
