import { STATUS_CODES } from 'node:http';
import { AddressRanges, guardedFetch, OutboundRequestError } from '@dagu-mcp/runtime';
import { ActionError, asRecord, type ActionOutput, type WithMap } from './action-types';

/**
 * `http.request` in the helper process (dagu-actions §1.2):
 * sent through runtime's `guardedFetch`, so every address the host resolves
 * to is checked after DNS resolution and a non-public one (loopback, private,
 * link-local, …) is refused unless run-service's `OUTBOUND_ALLOW_CIDRS` lists
 * it (`host.reachable`). Redirects are followed within the same origin (at
 * most {@link MAX_REDIRECTS}); the body is read up to {@link MAX_BODY_BYTES}.
 * `with` holds the resolved `method`, `url` (query already added),
 * `headers`, `body`, `timeoutSec` (default {@link DEFAULT_TIMEOUT_SEC}),
 * `silent`, `json`. Output: see http.executor.ts; a non-2xx returns its
 * output with the error `http status code not 2xx: <code> <text>`.
 */

/** Response bytes read at most (more fails the step: `too large`). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Same-origin redirects followed. */
export const MAX_REDIRECTS = 10;
/** Request deadline without `timeout` / `timeout_sec`, s (the step's own timeout also ends it). */
export const DEFAULT_TIMEOUT_SEC = 600;

function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

/** Sends the request. @throws ActionError when no HTTP answer came (refused address, timeout, network) */
export async function runHttpRequest(w: WithMap, host: WithMap): Promise<ActionOutput> {
  const cidrs = Array.isArray(host.reachable) ? host.reachable.map(String) : [];
  const headers = Object.fromEntries(Object.entries(asRecord(w.headers) ?? {}).map(([k, v]) => [k, String(v)]));
  const timeoutSec = typeof w.timeoutSec === 'number' && w.timeoutSec > 0 ? w.timeoutSec : DEFAULT_TIMEOUT_SEC;
  let response;
  try {
    response = await guardedFetch(typeof w.url === 'string' ? w.url : '', {
      reachable: { ranges: AddressRanges.parse(cidrs), setting: 'OUTBOUND_ALLOW_CIDRS' },
      protocols: ['http:', 'https:'],
      timeoutMs: timeoutSec * 1000,
      maxBytes: MAX_BODY_BYTES,
      maxRedirects: MAX_REDIRECTS,
      method: typeof w.method === 'string' ? w.method : 'GET',
      headers,
      ...(typeof w.body === 'string' ? { body: w.body } : {}),
    });
  } catch (error) {
    const reason = error instanceof OutboundRequestError ? error.message : String(error);
    throw new ActionError(`http.request failed: ${reason}`);
  }
  const ok = response.status >= 200 && response.status < 300;
  const statusText = STATUS_CODES[response.status] ?? '';
  const text = response.body.toString('utf8');
  const shown = Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, headerText(v)]));
  let stdout: string;
  if (w.json === true) {
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the body stays a string.
    }
    const bodyOnly = ok && w.silent === true;
    stdout = `${JSON.stringify(bodyOnly ? { body: parsed } : { status_code: response.status, headers: shown, body: parsed })}\n`;
  } else if (ok) stdout = text;
  else {
    const head = [
      `HTTP ${response.status} ${statusText}`.trim(),
      ...Object.entries(shown).map(([k, v]) => `${k}: ${v}`),
    ];
    stdout = `${head.join('\n')}\n\n${text}`;
  }
  if (ok) return { stdout };
  return { stdout, error: `http status code not 2xx: ${response.status} ${statusText}`.trim() };
}
