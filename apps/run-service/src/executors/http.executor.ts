import type { StepAction } from '@dagu-mcp/dag-spec';
import { interpolate, type InterpolationScope } from '../core/interpolate';
import type { StepExecutor } from '../core/run-types';

/**
 * The `http.request` action (dagu-model §3, dagu-actions §1.2): Node's fetch
 * with the step's method, url (plus `query`), headers and body (all
 * interpolated, plain mode: no shell runs here). Output (docs/decisions.md
 * "http.request output"): a 2xx prints the body (what Dagu prints with
 * `silent: true`; here the default, so `silent` changes nothing in text
 * mode); a non-2xx prints the status line, the headers, an empty line and
 * the body, then fails the step with `http status code not 2xx: <code>`.
 * `format: json` / `json: true` prints one object `{status_code, headers,
 * body}` (`body` parsed when it is JSON; `status_code` and `headers` left out
 * for a 2xx with `silent`). A network error or a timeout (`timeout` /
 * `timeout_sec`, seconds) fails it with the reason.
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
    const url = new URL(interpolate(action.url, scope, 'plain'));
    for (const [key, value] of Object.entries(action.query ?? {}))
      url.searchParams.append(key, interpolate(value, scope, 'plain'));
    const response = await fetch(url, { method, headers, body, signal });
    const text = await response.text();
    options.onBody(renderResponse(action, response, text));
    if (response.ok) return { ok: true, exitCode: 0, aborted: false, timedOut: false };
    return {
      ok: false,
      exitCode: 1,
      error: `http status code not 2xx: ${response.status} ${response.statusText}`.trim(),
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

/** What the step prints for `response` (see the module comment). */
function renderResponse(action: HttpAction, response: Response, text: string): string {
  const bodyOnly = response.ok && action.silent === true;
  const headers = Object.fromEntries([...response.headers.entries()]);
  if (action.json === true) {
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the body stays a string.
    }
    const out = bodyOnly ? { body: parsed } : { status_code: response.status, headers, body: parsed };
    return JSON.stringify(out);
  }
  if (response.ok) return text;
  const head = [
    `HTTP ${response.status} ${response.statusText}`.trim(),
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${head.join('\n')}\n\n${text}`;
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
