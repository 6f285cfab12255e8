/** What a REST call of the end-to-end tests sends. */
export interface RestInit {
  readonly method?: string;
  /** `Authorization: Bearer <token>`. */
  readonly token?: string;
  /** `user:password` for `Authorization: Basic` (wins over `token`). */
  readonly basic?: string;
  /** `X-Forwarded-For`. */
  readonly forwardedFor?: string;
  /** Sent as JSON (`content-type: application/json` is always set). */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A REST answer: status, headers, and the JSON body (`undefined` when empty). */
export interface RestReply {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown> | undefined;
}

/**
 * Calls `<baseUrl>/api/v1<path>` over plain HTTP (the real gateway, no client library) and
 * parses the JSON answer; a body that is not JSON fails the test with the parse error.
 */
export async function restCall(baseUrl: string, path: string, init: RestInit = {}): Promise<RestReply> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...init.headers };
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  if (init.basic !== undefined) headers.authorization = `Basic ${Buffer.from(init.basic).toString('base64')}`;
  if (init.forwardedFor !== undefined) headers['x-forwarded-for'] = init.forwardedFor;
  const res = await fetch(`${baseUrl}/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
  };
}
