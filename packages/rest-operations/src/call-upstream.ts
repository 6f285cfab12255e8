import type { UpstreamRequest } from './build-request';

/** How a call that got no HTTP answer failed (issue 25 item 6: "timeouts and network errors named"). */
export type UpstreamFailureKind = 'timeout' | 'network' | 'redirect_refused' | 'address_refused';

/** A call that got no usable HTTP answer. The message never carries the URL's query or a header. */
export class UpstreamFailure extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
    readonly attempts: number,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
  }
}

/** An upstream's HTTP answer, its body cut at the cap. */
export interface UpstreamResponse {
  readonly status: number;
  readonly contentType: string;
  /** The body as text, at most `maxBytes` bytes of it (UTF-8). */
  readonly text: string;
  /** True when the body was longer than `maxBytes` and was cut. */
  readonly truncated: boolean;
  /** Attempts made (1 + retries used). */
  readonly attempts: number;
  /** Wall time of the whole call, ms. */
  readonly durationMs: number;
}

/** Options of {@link callUpstream}. */
export interface CallOptions {
  /** Per attempt, ms. */
  readonly timeoutMs: number;
  /** Body bytes kept; the rest is not read. */
  readonly maxBytes: number;
  /** Extra attempts after a network failure, a timeout or a 502/503/504; pass 0 for non-idempotent calls. */
  readonly retries: number;
  /**
   * The HTTP dispatcher, e.g. an undici Agent whose `connect.lookup` refuses private
   * addresses (the SSRF guard): checking at connect time leaves no window between the
   * check and the connection.
   */
  readonly dispatcher?: RequestInit['dispatcher'];
  /** Redirects followed within the same origin (another origin is never followed). Default 3. */
  readonly maxRedirects?: number;
}

const RETRY_STATUSES = new Set([502, 503, 504]);

/**
 * Sends one upstream request with Node's HTTP client (undici's `fetch`): a timeout per
 * attempt, redirects followed only within the request's origin (another origin →
 * `redirect_refused`), the body read up to `maxBytes` and the rest dropped, retries with
 * 100 ms · 2ⁿ backoff for failures and 502/503/504 when `retries` > 0 (issue 25 items 2, 4, 5).
 *
 * @throws UpstreamFailure when no HTTP answer came (after the retries)
 */
export async function callUpstream(request: UpstreamRequest, options: CallOptions): Promise<UpstreamResponse> {
  const started = performance.now();
  let lastFailure: UpstreamFailure | undefined;
  for (let attempt = 1; attempt <= options.retries + 1; attempt++) {
    if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** (attempt - 2)));
    try {
      const response = await send(request, options, attempt);
      if (RETRY_STATUSES.has(response.status) && attempt <= options.retries) continue;
      return { ...response, attempts: attempt, durationMs: performance.now() - started };
    } catch (err) {
      lastFailure = failureOf(err, attempt);
      if (lastFailure.kind === 'redirect_refused' || lastFailure.kind === 'address_refused') throw lastFailure;
    }
  }
  throw lastFailure ?? new UpstreamFailure('network', 'The upstream did not answer.', options.retries + 1);
}

async function send(
  request: UpstreamRequest,
  options: CallOptions,
  attempt: number,
): Promise<Omit<UpstreamResponse, 'attempts' | 'durationMs'>> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  let url = request.url;
  let method = request.method;
  let body = request.body;
  for (let hop = 0; ; hop++) {
    const response = await fetch(url, {
      method,
      headers: request.headers,
      redirect: 'manual',
      signal,
      ...(body !== undefined ? { body } : {}),
      ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
    });
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      const next = new URL(location, url);
      if (next.origin !== request.url.origin)
        throw new UpstreamFailure(
          'redirect_refused',
          `The upstream redirected to another host (${next.host}).`,
          attempt,
        );
      if (hop >= (options.maxRedirects ?? 3))
        throw new UpstreamFailure('redirect_refused', 'The upstream redirected too many times.', attempt);
      url = next;
      // 303 (and 301/302 after a POST, as browsers do) turns the request into a bodyless GET.
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
      continue;
    }
    const { text, truncated } = await readCapped(response, options.maxBytes);
    return { status: response.status, contentType: response.headers.get('content-type') ?? '', text, truncated };
  }
}

/** Reads at most `maxBytes` of the body, then cancels the stream (the rest is never buffered). */
async function readCapped(response: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (response.body === null) return { text: '', truncated: false };
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  // A multi-byte character cut at the cap decodes to U+FFFD rather than failing.
  return { text: new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks, size)), truncated };
}

function failureOf(err: unknown, attempt: number): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  // Duck-typed: the abort reason is a DOMException, which need not share this realm's Error.
  const name = typeof err === 'object' && err !== null && 'name' in err ? String(err.name) : '';
  if (name === 'TimeoutError' || name === 'AbortError')
    return new UpstreamFailure('timeout', 'The upstream did not answer in time.', attempt);
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : undefined;
  const code = cause !== undefined && 'code' in cause ? String(cause.code) : '';
  if (code === 'ERR_ADDRESS_REFUSED' || cause?.name === 'AddressRefused')
    return new UpstreamFailure('address_refused', cause?.message ?? 'The upstream address is not allowed.', attempt);
  return new UpstreamFailure(
    'network',
    `The upstream could not be reached${code !== '' ? ` (${code})` : ''}.`,
    attempt,
  );
}
