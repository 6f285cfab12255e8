/**
 * Holds back the execution of freshly started runs while other starts are
 * being accepted. A burst of starts and the runs they launch share
 * one event loop: executing the first runs (planning, the run directory, the
 * spawn, state writes) delayed the replies to the later starts, so 100
 * starts at once took about as long to be answered as to finish. The gate
 * lets the starts in flight finish first, then opens for every held run at
 * once, in the order they were started; no run waits longer than
 * `maxHoldMs` (a steady stream of starts cannot starve execution).
 *
 * A start that arrives alone is not held: the gate is open when only the
 * start asking is in flight and nothing is held.
 *
 * When the last start in flight leaves, the gate opens after `quietMs` in
 * which no other start came in. The starts of a burst reach the service in
 * waves (each bus delivery round brings the next few), and between two waves
 * none is in flight for a moment: opening at once let the first runs execute
 * while most of the burst still waited for an answer (S8: 100 starts at once
 * answered in a median 431 ms with no quiet period, 338 ms with 15 ms). So
 * under a steady stream of starts less than `quietMs` apart, held runs go
 * every `maxHoldMs` (they went at each gap between two starts before).
 */
export class LaunchGate {
  private inFlight = 0;
  private held: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private quiet: NodeJS.Timeout | undefined;

  /**
   * @param maxHoldMs  the longest a run is held, ms (`RUN_LAUNCH_HOLD_MS`); 0: never held
   * @param quietMs    how long no start may be in flight before held runs go, ms
   *                   (`RUN_LAUNCH_QUIET_MS`, default 15); 0: as soon as the last one leaves
   */
  constructor(
    private readonly maxHoldMs: number,
    private readonly quietMs = 15,
  ) {}

  /** A start is being accepted (pair with {@link leave}, in a `finally`). */
  enter(): void {
    this.inFlight += 1;
    if (this.quiet !== undefined) clearTimeout(this.quiet);
    this.quiet = undefined;
  }

  /**
   * A start was answered or failed; once the last one out has been followed
   * by `quietMs` without a new start, every held run goes.
   */
  leave(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (this.inFlight !== 0 || this.held.length === 0) return;
    if (this.quietMs === 0) return this.release();
    if (this.quiet !== undefined) clearTimeout(this.quiet);
    this.quiet = setTimeout(() => {
      this.quiet = undefined;
      if (this.inFlight === 0) this.release();
    }, this.quietMs);
  }

  /**
   * Resolves at once when no other start is in flight and nothing is held
   * (or holding is off); else once the starts in flight have left, or after
   * `maxHoldMs`. Ask between `enter` and `leave` of the start that launches.
   * Never rejects.
   */
  whenOpen(): Promise<void> {
    // Behind runs already held, a run waits too: they go in the order they were started.
    if (this.maxHoldMs === 0 || (this.inFlight <= 1 && this.held.length === 0)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.held.push(resolve);
      this.timer ??= setTimeout(() => this.release(), this.maxHoldMs);
    });
  }

  /** Runs held at this moment (tests, metrics). */
  get heldCount(): number {
    return this.held.length;
  }

  /** Opens the gate for every held run now (shutdown). */
  releaseNow(): void {
    this.release();
  }

  private release(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.quiet !== undefined) clearTimeout(this.quiet);
    this.timer = undefined;
    this.quiet = undefined;
    const held = this.held;
    this.held = [];
    for (const open of held) open();
  }
}
