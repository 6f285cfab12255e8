import type { StepAction } from '@dagu-mcp/dag-spec';
import { interpolate, type InterpolationScope } from '../core/interpolate';
import type { StepExecutor } from '../core/run-types';
import { runActionHelper } from './host-action.executor';

/**
 * The `http.request` action (dagu-model §3, dagu-actions §1.2), sent by the action helper
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

/**
 * The request with every value interpolated (plain mode) and the query added
 * to the URL, as the helper gets it.
 *
 * @throws TypeError for a URL that does not parse after interpolation
 */
export function resolveHttpRequest(action: HttpAction, scope: InterpolationScope): Record<string, unknown> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(action.headers)) headers[key] = interpolate(value, scope, 'plain');
  const method = action.method.toUpperCase();
  const url = new URL(interpolate(action.url, scope, 'plain'));
  for (const [key, value] of Object.entries(action.query ?? {}))
    url.searchParams.append(key, interpolate(value, scope, 'plain'));
  const body =
    action.body === undefined || method === 'GET' || method === 'HEAD'
      ? undefined
      : interpolate(action.body, scope, 'plain');
  return {
    method,
    url: url.href,
    headers,
    ...(body !== undefined ? { body } : {}),
    ...(action.timeoutSec !== undefined ? { timeoutSec: action.timeoutSec } : {}),
    silent: action.silent === true,
    json: action.json === true,
  };
}

/**
 * `http.request` steps: the request runs in the action helper (as the run's
 * uid, in the step's directory), which follows
 * `OUTBOUND_ALLOW_CIDRS`; its output is the step's stdout, line by line.
 */
export const httpExecutor: StepExecutor = {
  publishesOutputs: true,
  run: async (ctx, input) => {
    const { action } = input.node.step;
    if (action?.type !== 'http.request') {
      // dag-spec gives kind `http` only to http.request actions; anything else is an engine bug, not a shell step.
      const error = `step ${input.node.name} of kind http has no http.request action`;
      input.onStderr(error);
      return { ok: false, error, timedOut: false, aborted: false };
    }
    let resolved: Record<string, unknown>;
    try {
      resolved = resolveHttpRequest(action, input.scope);
    } catch (error) {
      const message = `http.request failed: ${error instanceof Error ? error.message : String(error)}`;
      input.onStderr(message);
      return { ok: false, exitCode: 1, error: message, timedOut: false, aborted: false };
    }
    return runActionHelper(ctx, input, 'http.request', resolved, { reachable: ctx.config.outboundAllowCidrs });
  },
};
