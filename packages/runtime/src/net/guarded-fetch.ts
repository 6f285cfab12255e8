import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { nonPublicRefusal, OutboundAllowList, type ReachableRanges } from './address-guard';

/** Options of {@link guardedFetch}. */
export interface GuardedFetchOptions {
  /** Destinations allowed (see {@link OutboundAllowList}); empty: any public host. It never opens a non-public address. */
  readonly allow?: OutboundAllowList;
  /**
   * The non-public addresses (loopback, private, link-local, …) these calls may reach, and the
   * setting that lists them (named in refusals): `OUTBOUND_ALLOW_CIDRS` for calls made on an
   * author's behalf. Default: none.
   */
  readonly reachable?: ReachableRanges;
  /** Reach every non-public address (a test-only switch: `OAUTH_CIMD_ALLOW_PRIVATE`); default false. */
  readonly allowNonPublic?: boolean;
  /** `https:` only unless this lists `http:` too; default `['https:']`. */
  readonly protocols?: readonly string[];
  /** Whole-call deadline (connect, headers, body), ms; default 5000. */
  readonly timeoutMs?: number;
  /** Largest response body read, bytes; more fails the call (or is cut, with `truncate`); default 1 MiB. */
  readonly maxBytes?: number;
  /**
   * Cut a body longer than `maxBytes` instead of failing: the first `maxBytes` bytes are
   * answered with `truncated: true` and the rest is never read (REST-operation results).
   */
  readonly truncate?: boolean;
  /** Same-host redirects followed (a redirect to another host always fails); default 0. */
  readonly maxRedirects?: number;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
}

/** A response read whole under the limits. */
export interface GuardedResponse {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
  /** The URL finally answered (after same-host redirects). */
  readonly url: string;
  /** True when the body was cut at `maxBytes` (only with the `truncate` option). */
  readonly truncated?: boolean;
}

/** The address a `blocked` refusal names and the rule that refused it (`loopback`, `link-local`, `allow-list`, …). */
export interface AddressRefusal {
  readonly address: string;
  readonly rule: string;
}

/** Why an outbound call was refused or failed; `reason` is safe to show (no response content). */
export class OutboundRequestError extends Error {
  constructor(
    readonly reason: 'blocked' | 'protocol' | 'redirect' | 'timeout' | 'too_large' | 'network',
    message: string,
    /** For a destination refused by an address rule: which address, which rule. */
    readonly refused?: AddressRefusal,
  ) {
    super(message);
  }
}

/**
 * Fetches a user-supplied URL with SSRF guards (shared with the
 * REST-operations upstream calls): the protocol is checked; the host must be on
 * the allow-list (when one is given) by name or by a resolved address in a listed
 * range; every address the name resolves to is checked AFTER DNS resolution, in
 * the socket's own lookup, so the address connected to is the one checked (no
 * rebinding between check and connect); a non-public address is refused unless
 * `reachable` covers it (or `allowNonPublic`), whatever the allow-list says, and one refused address refuses the name; redirects are followed only to the same origin and at most
 * `maxRedirects` times; the whole call has a deadline and the body a size cap.
 *
 * @throws OutboundRequestError for a refused destination, a cross-host redirect, a timeout, a too-large body or a network failure
 */
export async function guardedFetch(url: string, options: GuardedFetchOptions = {}): Promise<GuardedResponse> {
  const deadline = Date.now() + (options.timeoutMs ?? 5000);
  let current = new URL(url);
  const origin = current.origin;
  let hopOptions = options;
  for (let hop = 0; ; hop++) {
    const response = await fetchOnce(current, hopOptions, deadline);
    const location = response.status >= 300 && response.status < 400 ? response.headers.location : undefined;
    if (location === undefined) return response;
    const next = new URL(location, current);
    if (next.origin !== origin)
      throw new OutboundRequestError('redirect', `redirect to another host refused (${next.host})`);
    if (hop >= (options.maxRedirects ?? 0)) throw new OutboundRequestError('redirect', 'too many redirects');
    current = next;
    // 303, and 301/302 after a POST (as browsers do), continue as a GET without the body (RFC 9110 §15.4).
    const method = (hopOptions.method ?? 'GET').toUpperCase();
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      const headers = Object.fromEntries(
        Object.entries(hopOptions.headers ?? {}).filter(([k]) => !/^content-(type|length)$/i.test(k)),
      );
      hopOptions = { ...hopOptions, method: 'GET', headers, body: undefined };
    }
  }
}

function fetchOnce(url: URL, options: GuardedFetchOptions, deadline: number): Promise<GuardedResponse> {
  const protocols = options.protocols ?? ['https:'];
  if (!protocols.includes(url.protocol)) {
    return Promise.reject(new OutboundRequestError('protocol', `the ${url.protocol} scheme is not allowed`));
  }
  if (url.username !== '' || url.password !== '') {
    return Promise.reject(new OutboundRequestError('blocked', 'URLs with credentials are not fetched'));
  }
  const allow = options.allow ?? new OutboundAllowList([]);
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const byName = allow.isEmpty || allow.allowsHost(hostname);
  const lookup = guardedLookup(allow, byName, options);
  if (isIP(hostname) !== 0) {
    // An IP literal bypasses the socket's lookup: check it here.
    const problem = addressProblem(hostname, allow, byName, options);
    if (problem !== undefined) return Promise.reject(problem);
  }
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<GuardedResponse>((resolve, reject) => {
    const remaining = Math.max(1, deadline - Date.now());
    const req = send(url, { method: options.method ?? 'GET', headers: options.headers, lookup }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let cut = false;
      const answer = (truncated: boolean): void =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          url: url.href,
          ...(truncated ? { truncated } : {}),
        });
      res.on('data', (chunk: Buffer) => {
        if (cut) return;
        size += chunk.length;
        if (size > maxBytes) {
          if (options.truncate === true) {
            // Keep what fits, answer, and drop the connection: the rest is never read.
            chunks.push(chunk.subarray(0, chunk.length - (size - maxBytes)));
            cut = true;
            answer(true);
            res.destroy();
            req.destroy();
            return;
          }
          reject(new OutboundRequestError('too_large', `response larger than ${maxBytes} bytes`));
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        if (!cut && size <= maxBytes) answer(false);
      });
      res.on('error', (err) => reject(asOutboundError(err)));
    });
    const timer = setTimeout(
      () => req.destroy(new OutboundRequestError('timeout', `no complete answer within ${remaining} ms`)),
      remaining,
    );
    req.on('error', (err) => reject(asOutboundError(err)));
    req.on('close', () => clearTimeout(timer));
    req.end(options.body);
  });
}

/** The socket lookup that refuses a name whose resolved addresses are not allowed. */
function guardedLookup(allow: OutboundAllowList, byName: boolean, options: GuardedFetchOptions): LookupFunction {
  return (hostname, opts, callback) => {
    dnsLookup(hostname, { ...opts, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      for (const a of addresses) {
        const problem = addressProblem(a.address, allow, byName, options);
        if (problem !== undefined) return callback(problem, '', 0);
      }
      const first = addresses[0];
      if (first === undefined)
        return callback(new OutboundRequestError('network', `${hostname} did not resolve`), '', 0);
      // With `all` (Node's happy-eyeballs connect asks for it) the callback takes the whole list.
      if (opts.all === true) return void Reflect.apply(callback, undefined, [null, addresses]);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * The refusal of one address, or `undefined`: first the deployment's rule for non-public
 * addresses (the allow-list cannot open one), then the allow-list (a host allowed by name
 * may resolve anywhere public; otherwise the address must be listed).
 */
function addressProblem(
  address: string,
  allow: OutboundAllowList,
  byName: boolean,
  options: GuardedFetchOptions,
): OutboundRequestError | undefined {
  const nonPublic = nonPublicRefusal(address, options.reachable, options.allowNonPublic ?? false);
  if (nonPublic !== undefined)
    return new OutboundRequestError('blocked', nonPublic.message, { address, rule: nonPublic.rule });
  if (!byName && !allow.allowsAddress(address))
    return new OutboundRequestError('blocked', `${address} is not on the allow-list`, { address, rule: 'allow-list' });
  return undefined;
}

function asOutboundError(err: unknown): OutboundRequestError {
  if (err instanceof OutboundRequestError) return err;
  return new OutboundRequestError('network', err instanceof Error ? err.message : 'request failed');
}
