/**
 * The console's calls to the gateway's REST API (`<BASE_PATH>/api/v1`), signed in by the
 * `dagu_session` cookie (docs/decisions.md "The web console"): the browser sends the
 * cookie; a state-changing call carries the session's `X-CSRF-Token`.
 */

/** The gateway's `BASE_PATH` as the page was served under (`<meta name="dagu-base">`). */
export const BASE: string = document.querySelector('meta[name="dagu-base"]')?.getAttribute('content') ?? '';

/** A REST error answer: `{code, message, field?, details?}` with the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

let csrfToken = '';

/** Remembers the session's CSRF token (from `GET /api/v1/session`). */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** The sign-in page, coming back to where the person was. */
export function signInUrl(): string {
  const next = `${location.pathname}${location.search}`;
  return `${BASE}/signin?next=${encodeURIComponent(next)}`;
}

/**
 * Calls `<BASE>/api/v1<path>` and returns the JSON answer.
 * A 401 sends the browser to the sign-in page (the session ended).
 * @throws ApiError with the answer's code and message on any other non-2xx status
 */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  return apiAt<T>('/api/v1', path, init);
}

/**
 * {@link api} under another prefix of the gateway: `/api/mcp` holds the OAuth authorizations'
 * JSON, signed in by the same session cookie.
 * @throws ApiError as {@link api}
 */
export async function apiAt<T>(
  prefix: '/api/v1' | '/api/mcp',
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<T> {
  const method = init.method ?? 'GET';
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${BASE}${prefix}${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  if (res.status === 401 && path !== '/session') location.assign(signInUrl());
  const text = await res.text();
  const json: unknown = text === '' ? undefined : JSON.parse(text);
  if (!res.ok) {
    const body = (json ?? {}) as { code?: string; message?: string; field?: string };
    throw new ApiError(res.status, body.code ?? 'error', body.message ?? res.statusText, body.field);
  }
  return json as T;
}

/** Encodes path segments (DAG names, run ids, step names). */
export function seg(value: string): string {
  return encodeURIComponent(value);
}
