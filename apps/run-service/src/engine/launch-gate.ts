/**
 * Holds back the execution of freshly started runs while other starts are
 * being accepted (issue 28). A burst of starts and the runs they launch share
 * one event loop: executing the first runs (planning, the run directory, the
 * spawn, state writes) delayed the replies to the later starts, so 100
 * starts at once took about as long to be answered as to finish. The gate
 * lets the starts in flight finish first, then launches every held run at
 * once; no run waits longer than `maxHoldMs` (a steady stream of starts
 * cannot starve execution).
 *
 * A start that arrives alone launches its run before it replies, as before:
 * the gate closes when the start enters and opens when it leaves.
 */
export class LaunchGate {
  private inFlight = 0;
  private held: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param maxHoldMs  the longest a run is held, ms (`RUN_LAUNCH_HOLD_MS`); 0: never held
   */
  constructor(private readonly maxHoldMs: number) {}

  /** A start is being accepted (pair with {@link leave}, in a `finally`). */
  enter(): void {
    this.inFlight += 1;
  }

  /** A start was answered or failed; the last one out launches every held run. */
  leave(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (this.inFlight === 0) this.release();
  }

  /**
   * Runs `launch` now when no other start is in flight (or holding is off),
   * else once the starts in flight have left, or after `maxHoldMs`.
   * Call it between `enter` and `leave` of the start that launches.
   */
  launch(launch: () => void): void {
    // Behind runs already held, a run waits too: they launch in the order they were started.
    if (this.maxHoldMs === 0 || (this.inFlight <= 1 && this.held.length === 0)) {
      launch();
      return;
    }
    this.held.push(launch);
    this.timer ??= setTimeout(() => this.release(), this.maxHoldMs);
  }

  /** Runs held at this moment (tests, metrics). */
  get heldCount(): number {
    return this.held.length;
  }

  /** Launches every held run now (shutdown). */
  releaseNow(): void {
    this.release();
  }

  private release(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const held = this.held;
    this.held = [];
    for (const launch of held) launch();
  }
}
