import { randomInt } from 'node:crypto';

/**
 * The uids of a replica's runs (docs/security.md "A uid per run"):
 * every run takes one uid of `RUN_STEP_UID_RANGE` that no other active run of
 * this replica holds, and gives it back when it ended.
 *
 * Uids are handed out in turn from a random starting point, never the lowest
 * free one: a uid comes back only after the whole range went round, so what a
 * run left behind where the engine does not clean (a run directory of a
 * killed replica) is unlikely to meet the same uid again soon. Replicas on
 * one host (one kernel) must be given disjoint ranges: this pool knows only
 * its own replica's runs.
 */
export class UidPool {
  private readonly held = new Set<number>();
  private next: number;

  /**
   * @param first lowest uid of the range (≥ 1)
   * @param last  highest uid of the range (≥ first)
   * @throws RangeError on an empty range or a range holding uid 0
   */
  constructor(
    readonly first: number,
    readonly last: number,
  ) {
    if (!Number.isInteger(first) || !Number.isInteger(last) || first < 1 || last < first)
      throw new RangeError(`bad uid range ${first}-${last}`);
    this.next = first + randomInt(0, Math.min(last - first + 1, 2 ** 47));
  }

  /** How many uids the range holds. */
  get size(): number {
    return this.last - this.first + 1;
  }

  /** How many uids active runs hold now. */
  get inUse(): number {
    return this.held.size;
  }

  /**
   * Takes a uid no active run holds.
   *
   * @returns the uid
   * @throws Error "no free uid …" when every uid of the range is held
   */
  acquire(): number {
    if (this.held.size >= this.size)
      throw new Error(
        `no free uid in RUN_STEP_UID_RANGE ${this.first}-${this.last}: ${this.held.size} active runs hold them all`,
      );
    for (;;) {
      const uid = this.next;
      this.next = uid >= this.last ? this.first : uid + 1;
      if (!this.held.has(uid)) {
        this.held.add(uid);
        return uid;
      }
    }
  }

  /** Gives `uid` back (a uid not held is ignored). */
  release(uid: number): void {
    this.held.delete(uid);
  }
}
