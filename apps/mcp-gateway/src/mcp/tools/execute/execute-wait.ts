import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import {
  DaguError,
  TERMINAL_RUN_STATUSES,
  WAITING_RUN_STATUS,
  isTransientCode,
  StepStatus,
  type RunDetail,
} from '@dagu-mcp/contracts';
import type { RunWatch } from '../../run-events';

/** Progress notifications go out at least this often while waiting (dagu-model §10: at least every 10 s). */
export const PROGRESS_INTERVAL_MS = 5_000;
/** Without a progress token a wait ends after at most this long (dagu-model §10: at most 50 s). */
export const NO_PROGRESS_TOKEN_CAP_MS = 50_000;
/** Longest pause between two reads of the run when no event arrives (a safety net for lost events). */
const FALLBACK_READ_MS = 5_000;
/** Bounds of one `run.get` deadline during a wait. */
const READ_DEADLINE_MIN_MS = 2_000;
const READ_DEADLINE_MAX_MS = 10_000;

/** The last observed state of the run: its status, and the full model when it was read. */
export interface Observed {
  readonly status: number;
  readonly statusLabel: string;
  readonly run?: RunDetail;
}

/**
 * How a wait ended (036 §Wait):
 * - `finished`: terminal status {2,3,4,6,8} (`completed=true`);
 * - `waiting`: status 7, a human task or approval gate (`completed=false`, `run` filled);
 * - `timeout`: the cap passed, the run goes on;
 * - `interrupted`: the client cancelled (`notifications/cancelled`) or the session ended;
 * - `failed`: reading the run failed (`waitError`; the call is still a success).
 */
export type WaitOutcome =
  | { readonly kind: 'finished' | 'waiting'; readonly observed: Observed & { readonly run: RunDetail } }
  | { readonly kind: 'timeout'; readonly observed: Observed; readonly waitedSeconds: number }
  | { readonly kind: 'interrupted'; readonly observed: Observed }
  | { readonly kind: 'failed'; readonly observed: Observed; readonly error: string };

/** What a wait needs; `readRun` is one `run.get` with the given deadline. */
export interface WaitInput {
  readonly readRun: (timeoutMs: number) => Promise<RunDetail>;
  readonly watch: RunWatch;
  /** The state the action reply reported (the first observation). */
  readonly initial: Observed;
  /** False for reads of an attempt the wait must not judge (a retry waits for the NEW attempt). */
  readonly isCurrentAttempt: (run: RunDetail) => boolean;
  /** Whether status 7 ends the wait (not for `stop`, which waits for the abort). */
  readonly endAtWaiting: boolean;
  readonly timeoutSeconds: number;
  readonly signal: AbortSignal;
  readonly progressToken: string | number | undefined;
  readonly notify: (notification: ServerNotification) => Promise<void>;
  readonly now?: () => number;
}

/**
 * Waits for a run (036 §Wait, dagu-model §10): reads the run once at the
 * start and again after every event of the watch (or after
 * {@link FALLBACK_READ_MS} without one), until a terminal status, the waiting
 * checkpoint, the cap, a read failure or the client's cancel. Sends
 * `notifications/progress` every {@link PROGRESS_INTERVAL_MS} when the request
 * has a progress token; without one the cap is at most 50 s. Never throws and
 * never touches the run itself.
 */
export async function waitForRun(input: WaitInput): Promise<WaitOutcome> {
  const now = input.now ?? Date.now;
  const started = now();
  const capMs = input.timeoutSeconds * 1000;
  const deadline = started + (input.progressToken === undefined ? Math.min(capMs, NO_PROGRESS_TOKEN_CAP_MS) : capMs);
  let observed: Observed = input.initial;
  const stopProgress = startProgress(input, started, () => observed, now);
  try {
    let transient: string | undefined;
    for (;;) {
      if (input.signal.aborted) return { kind: 'interrupted', observed };
      const remaining = deadline - now();
      try {
        const run = await input.readRun(Math.min(READ_DEADLINE_MAX_MS, Math.max(READ_DEADLINE_MIN_MS, remaining)));
        transient = undefined;
        if (input.isCurrentAttempt(run)) {
          const reached = { status: run.status, statusLabel: run.statusLabel, run };
          observed = reached;
          if (TERMINAL_RUN_STATUSES.has(run.status)) return { kind: 'finished', observed: reached };
          if (run.status === WAITING_RUN_STATUS && input.endAtWaiting) return { kind: 'waiting', observed: reached };
        }
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (!(err instanceof DaguError) || !isTransientCode(err.code))
          return { kind: 'failed', observed, error: message };
        transient = message;
      }
      if (input.signal.aborted) return { kind: 'interrupted', observed };
      const left = deadline - now();
      if (left <= 0) {
        return transient !== undefined
          ? { kind: 'failed', observed, error: transient }
          : { kind: 'timeout', observed, waitedSeconds: Math.round((now() - started) / 1000) };
      }
      await input.watch.changed(Math.min(left, FALLBACK_READ_MS), input.signal);
    }
  } finally {
    stopProgress();
  }
}

/** Step statuses shown as running in progress messages: `running` (1) and `retrying` (9), dagu-model §1. */
const ACTIVE_STEP_STATUSES: ReadonlySet<number> = new Set([StepStatus.running, StepStatus.retrying]);

/**
 * The text of one progress notification: the run's status, the seconds
 * waited, and the steps running at the last read, e.g.
 * `Waiting for the run: running after 10 s; running steps: extract, load.`
 */
export function progressMessage(observed: Observed, waitedSeconds: number): string {
  const head = `Waiting for the run: ${observed.statusLabel} after ${Math.round(waitedSeconds)} s`;
  const running = (observed.run?.steps ?? []).filter((step) => ACTIVE_STEP_STATUSES.has(step.status));
  return running.length === 0 ? `${head}.` : `${head}; running steps: ${running.map((s) => s.name).join(', ')}.`;
}

/** Sends `notifications/progress` on a timer while waiting; returns the stopper. A failed send is ignored. */
function startProgress(input: WaitInput, started: number, current: () => Observed, now: () => number): () => void {
  const token = input.progressToken;
  if (token === undefined) return () => undefined;
  const timer = setInterval(() => {
    const observed = current();
    const waited = (now() - started) / 1000;
    input
      .notify({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: waited,
          total: input.timeoutSeconds,
          message: progressMessage(observed, waited),
        },
      })
      .catch(() => undefined);
  }, PROGRESS_INTERVAL_MS);
  return () => clearInterval(timer);
}
