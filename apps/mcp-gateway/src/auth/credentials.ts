import type { Request } from 'express';

/** A credential as presented (020 §Authentication). Never logged, never put in a job. */
export type Credential = { scheme: 'bearer'; token: string } | { scheme: 'basic'; username: string; password: string };

/**
 * Reads the request's credential: the `Authorization` header (`Bearer …` or
 * `Basic …`), else `?token=` as a bearer fallback (020: only when no
 * header is present). The `token` parameter is removed from `req.url` and
 * `req.originalUrl` in every case, so nothing downstream logs or stores it.
 *
 * @returns the credential, `undefined` when none was given, or `'malformed'`
 */
export function takeCredential(req: Request): Credential | undefined | 'malformed' {
  const fromQuery = stripTokenParam(req);
  const header = req.headers.authorization;
  if (header !== undefined && header !== '') return parseAuthorization(header);
  return fromQuery === undefined || fromQuery === '' ? undefined : { scheme: 'bearer', token: fromQuery };
}

/** Parses an `Authorization` header value. */
export function parseAuthorization(header: string): Credential | 'malformed' {
  const space = header.indexOf(' ');
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
  const value = space < 0 ? '' : header.slice(space + 1).trim();
  if (value === '') return 'malformed';
  if (scheme === 'bearer') return { scheme: 'bearer', token: value };
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return 'malformed';
    return { scheme: 'basic', username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return 'malformed';
}

function stripTokenParam(req: Request): string | undefined {
  const q = req.url.indexOf('?');
  if (q < 0) return undefined;
  const params = new URLSearchParams(req.url.slice(q + 1));
  if (!params.has('token')) return undefined;
  const token = params.get('token') ?? undefined;
  params.delete('token');
  const rest = params.toString();
  const strip = (url: string): string => {
    const i = url.indexOf('?');
    return (i < 0 ? url : url.slice(0, i)) + (rest === '' ? '' : `?${rest}`);
  };
  req.url = strip(req.url);
  req.originalUrl = strip(req.originalUrl);
  return token;
}
