import type { NextFunction, Request, Response } from 'express';
import { isLoopback } from '../../config';
import { errorResponse } from './protocol';

/** Host names accepted by default when the gateway listens on a loopback address. */
export const LOOPBACK_HOST_NAMES: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** Options of {@link mcpOriginGuard}. */
export interface OriginGuardOptions {
  /**
   * Origins (`scheme://host[:port]`) allowed to call the MCP endpoint from a
   * browser. Empty: only the gateway's own origin, i.e. the origin the request
   * was addressed to (`<protocol>://<Host>`).
   */
  readonly allowedOrigins: readonly string[];
  /**
   * Host names (no port) the `Host` header may carry; `undefined` disables
   * the check. The gateway passes {@link LOOPBACK_HOST_NAMES} (plus
   * `ALLOWED_HOSTS`) when it listens on loopback.
   */
  readonly allowedHosts: readonly string[] | undefined;
}

/**
 * The guard settings of a gateway config: `ALLOWED_ORIGINS` as given; the
 * `Host` check is on when the gateway listens on loopback (loopback names
 * plus `ALLOWED_HOSTS`) or when `ALLOWED_HOSTS` is set.
 */
export function originRulesFor(config: {
  readonly HOST: string;
  readonly ALLOWED_ORIGINS: readonly string[];
  readonly ALLOWED_HOSTS: readonly string[];
}): OriginGuardOptions {
  const extra = config.ALLOWED_HOSTS.map(hostName);
  const allowedHosts = isLoopback(config.HOST)
    ? [...LOOPBACK_HOST_NAMES, ...extra]
    : extra.length > 0
      ? extra
      : undefined;
  return { allowedOrigins: config.ALLOWED_ORIGINS, allowedHosts };
}

/**
 * DNS-rebinding and cross-origin protection of the MCP endpoint (Streamable
 * HTTP §Security Warning), run before authentication:
 *
 * - a `Host` whose name is not allowed → 403 (a rebinding page reaches a
 *   loopback server under a foreign name);
 * - an `Origin` that is not allowed → 403; requests without `Origin`
 *   (non-browser clients) pass.
 *
 * Both answers are JSON-RPC error bodies (`-32000`).
 */
export function mcpOriginGuard(options: OriginGuardOptions) {
  const origins = new Set(options.allowedOrigins.map(normalizeOrigin));
  const hosts =
    options.allowedHosts === undefined ? undefined : new Set(options.allowedHosts.map((h) => h.toLowerCase()));
  return function mcpOriginGuard(req: Request, res: Response, next: NextFunction): void {
    const host = req.headers.host ?? '';
    if (hosts !== undefined && !hosts.has(hostName(host))) {
      res.status(403).json(errorResponse(null, -32000, `Forbidden: Host ${host || '(none)'} is not allowed.`));
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const own = normalizeOrigin(`${req.protocol}://${host}`);
      const allowed = origins.size === 0 ? normalizeOrigin(origin) === own : origins.has(normalizeOrigin(origin));
      if (!allowed) {
        res.status(403).json(errorResponse(null, -32000, `Forbidden: Origin ${origin} is not allowed.`));
        return;
      }
    }
    next();
  };
}

/**
 * POST bodies must be `application/json` (any charset) → else 415 with a
 * JSON-RPC error body, before the body is read.
 */
export function mcpJsonContentType() {
  return function mcpJsonContentType(req: Request, res: Response, next: NextFunction): void {
    if (req.method !== 'POST') return next();
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (type !== 'application/json') {
      res
        .status(415)
        .json(errorResponse(null, -32000, 'Unsupported Media Type: Content-Type must be application/json.'));
      return;
    }
    next();
  };
}

/** The name part of a `Host` header: `127.0.0.1:8080` → `127.0.0.1`, `[::1]:8080` → `::1`. */
export function hostName(host: string): string {
  const lower = host.trim().toLowerCase();
  if (lower.startsWith('[')) return lower.slice(1, lower.indexOf(']') === -1 ? undefined : lower.indexOf(']'));
  const colon = lower.indexOf(':');
  return colon === -1 ? lower : lower.slice(0, colon);
}

/** `HTTPS://Example.com:443/` → `https://example.com` (default ports dropped); unparsable values are compared as given. */
export function normalizeOrigin(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return origin.trim().toLowerCase();
  }
}
