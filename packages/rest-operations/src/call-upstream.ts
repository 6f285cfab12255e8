import {
  guardedFetch,
  OutboundRequestError,
  type AddressRefusal,
  type OutboundAllowList,
  type ReachableRanges,
} from '@dagu-mcp/runtime';
import type { UpstreamRequest } from './build-request';

/** How a call that got no HTTP answer failed ("timeouts and network errors named"). */
export type UpstreamFailureKind = 'timeout' | 'network' | 'redirect_refused' | 'address_refused';

/** A call that got no usable HTTP answer. The message never carries the URL's query or a header. */
export class UpstreamFailure extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
    readonly attempts: number,
    /** For `address_refused` by an address rule: the address and the rule (`loopback`, `allow-list`, …). */
    readonly refused?: AddressRefusal,
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
   * The upstream's allow-list (the SSRF guard, runtime `guardedFetch`): checked after DNS
   * resolution in the socket's own lookup, so the address connected to is the one checked.
   * It only narrows: it never opens a non-public address.
   */
  readonly allow: OutboundAllowList;
  /**
   * The non-public addresses (loopback, private, link-local, …) the call may reach: the
   * deployment's `OUTBOUND_ALLOW_CIDRS`. Any other non-public address is refused.
   */
  readonly reachable: ReachableRanges;
  /** Redirects followed within the same origin (another origin is never followed). Default 3. */
  readonly maxRedirects?: number;
}

const RETRY_STATUSES = new Set([502, 503, 504]);

/**
 * Sends one upstream request through the shared SSRF guard (runtime `guardedFetch`, the helper the OAuth metadata-document fetch uses): the upstream's allow-list and the
 * deployment's reachable non-public ranges checked after DNS resolution, a timeout per attempt, redirects followed only within the
 * request's origin (another origin → `redirect_refused`), the body read up to `maxBytes`
 * and the rest never read, retries with 100 ms · 2ⁿ backoff for failures and 502/503/504
 * when `retries` > 0.
 *
 * @throws UpstreamFailure when no HTTP answer came (after the retries)
 */
export async function callUpstream(request: UpstreamRequest, options: CallOptions): Promise<UpstreamResponse> {
  const started = performance.now();
  let lastFailure: UpstreamFailure | undefined;
  for (let attempt = 1; attempt <= options.retries + 1; attempt++) {
    if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** (attempt - 2)));
    try {
      const response = await send(request, options);
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
): Promise<Omit<UpstreamResponse, 'attempts' | 'durationMs'>> {
  const headers = { ...request.headers };
  if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
  const response = await guardedFetch(request.url.href, {
    allow: options.allow,
    reachable: options.reachable,
    protocols: ['http:', 'https:'],
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxBytes,
    truncate: true,
    maxRedirects: options.maxRedirects ?? 3,
    method: request.method,
    headers,
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
  const contentType = response.headers['content-type'] ?? '';
  // A multi-byte character cut at the cap decodes to U+FFFD rather than failing.
  const text = new TextDecoder('utf-8', { fatal: false }).decode(response.body);
  return { status: response.status, contentType, text, truncated: response.truncated === true };
}

/** The failure kind of a guard refusal or a failed call; messages carry no URL query, header or body. */
function failureOf(err: unknown, attempt: number): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  if (err instanceof OutboundRequestError) {
    switch (err.reason) {
      case 'timeout':
        return new UpstreamFailure('timeout', 'The upstream did not answer in time.', attempt);
      case 'redirect':
        return new UpstreamFailure('redirect_refused', `The upstream was refused: ${err.message}.`, attempt);
      case 'blocked':
      case 'protocol':
        return new UpstreamFailure(
          'address_refused',
          `The upstream address is refused: ${err.message}.`,
          attempt,
          err.refused,
        );
      default:
        return new UpstreamFailure('network', 'The upstream could not be reached.', attempt);
    }
  }
  return new UpstreamFailure('network', 'The upstream could not be reached.', attempt);
}
