import type { StepAction } from '@dagu-mcp/dag-spec';
import { interpolate, type InterpolationScope } from '../core/interpolate';
import type { StepExecutor } from '../core/run-types';

/**
 * The `http.request` action (dagu-model §3): Node's fetch with the step's
 * method, url, headers and body (all interpolated, plain mode: no shell runs
 * here). The response body is the step's stdout; a status outside 2xx fails
 * the step with `HTTP <status> <text>`; a network error or a `timeout_sec`
 * of the action fails it with the reason.
 */

type HttpAction = Extract<StepAction, { type: 'http.request' }>;

/** How the request ended. */
export interface HttpOutcome {
  ok: boolean;
  /** 0 on success, 1 otherwise (what `${id.exit_code}` reports). */
  exitCode: number;
  error?: string;
  aborted: boolean;
  timedOut: boolean;
}

/** Runs the request; never rejects. `onBody` receives the response body text. */
export async function runHttpRequest(
  action: HttpAction,
  scope: InterpolationScope,
  options: { signal: AbortSignal; timeoutMs?: number; onBody(text: string): void },
): Promise<HttpOutcome> {
  const timeouts: AbortSignal[] = [options.signal];
  const actionTimeoutMs = action.timeoutSec === undefined ? undefined : action.timeoutSec * 1000;
  const limit = [actionTimeoutMs, options.timeoutMs].filter((v): v is number => v !== undefined);
  if (limit.length > 0) timeouts.push(AbortSignal.timeout(Math.min(...limit)));
  const signal = AbortSignal.any(timeouts);
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(action.headers)) headers[key] = interpolate(value, scope, 'plain');
  const method = action.method.toUpperCase();
  const body =
    action.body === undefined || method === 'GET' || method === 'HEAD'
      ? undefined
      : interpolate(action.body, scope, 'plain');
  try {
    const response = await fetch(interpolate(action.url, scope, 'plain'), { method, headers, body, signal });
    options.onBody(await response.text());
    if (response.ok) return { ok: true, exitCode: 0, aborted: false, timedOut: false };
    return {
      ok: false,
      exitCode: 1,
      error: `HTTP ${response.status} ${response.statusText}`.trim(),
      aborted: false,
      timedOut: false,
    };
  } catch (error) {
    const aborted = options.signal.aborted;
    const timedOut = !aborted && signal.aborted;
    const reason = timedOut
      ? 'request timed out'
      : error instanceof Error
        ? `${error.message}${causeOf(error)}`
        : String(error);
    return { ok: false, exitCode: 1, error: `http.request failed: ${reason}`, aborted, timedOut };
  }
}

function causeOf(error: Error): string {
  const cause: unknown = error.cause;
  return cause instanceof Error ? ` (${cause.message})` : '';
}

/**
 * `http.request` steps: the response body becomes the step's stdout, line by
 * line; the error, if any, its last stderr line.
 */
export const httpExecutor: StepExecutor = {
  publishesOutputs: true,
  run: async (_ctx, input) => {
    const { action } = input.node.step;
    if (action?.type !== 'http.request') {
      // dag-spec gives kind `http` only to http.request actions; anything else is an engine bug, not a shell step.
      const error = `step ${input.node.name} of kind http has no http.request action`;
      input.onStderr(error);
      return { ok: false, error, timedOut: false, aborted: false };
    }
    const outcome = await runHttpRequest(action, input.scope, {
      signal: input.signal,
      timeoutMs: input.timeoutMs,
      onBody: (text) => {
        if (text === '') return;
        for (const line of text.replace(/\r?\n$/, '').split('\n')) input.onStdout(line.replace(/\r$/, ''));
      },
    });
    if (outcome.error !== undefined) input.onStderr(outcome.error);
    return outcome;
  },
};
