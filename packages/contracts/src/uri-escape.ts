/**
 * Strict percent-encoding for `dagu://` URIs (RFC 3986 §2.1, §3.3, §3.4;
 * spec 020 "Resource URI Model": reserved characters in names are
 * percent-encoded as path segments). Internal to the codec: not re-exported
 * from the package index.
 *
 * Decoding is strict on purpose: a raw character outside the RFC 3986 set
 * (space, raw non-ASCII, `"`, `<`, `\`, …), a `%` not followed by two hex
 * digits, or escapes that are not valid UTF-8 make the whole URI malformed.
 * Encoding is canonical: every octet outside RFC 3986 `unreserved`
 * (`A-Z a-z 0-9 - . _ ~`) becomes an upper-case `%HH` escape of its UTF-8 bytes.
 */

/** `%` followed by exactly two hex digits. */
const HEX_PAIR = /^[0-9A-Fa-f]{2}$/;
/** RFC 3986 `pchar` minus `%`: unreserved, sub-delims, `:` and `@`. */
const PCHAR_RAW = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/;
/** RFC 3986 `query` characters minus `%`: pchar, `/` and `?`. */
const QUERY_RAW = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?]$/;
/** RFC 3986 `reg-name` minus `%`: unreserved and sub-delims (no `:` or `@`). */
const REG_NAME_RAW = /^[A-Za-z0-9\-._~!$&'()*+,;=]$/;
/** Sub-delims that `encodeURIComponent` leaves raw but canonical form escapes. */
const EXTRA_ESCAPES = /[!'()*]/g;

/** True when every character of `raw` is in `allowed` or starts a well-formed `%HH` escape. */
function hasValidSyntax(raw: string, allowed: RegExp): boolean {
  for (let i = 0; i < raw.length; i += 1) {
    const ch = raw.charAt(i);
    if (ch === '%') {
      if (!HEX_PAIR.test(raw.slice(i + 1, i + 3))) return false;
      i += 2;
    } else if (!allowed.test(ch)) {
      return false;
    }
  }
  return true;
}

/** Percent-decodes `text` as UTF-8; `undefined` for invalid UTF-8 (overlong, truncated, surrogate). */
function decodeUtf8(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/**
 * Decodes one raw path segment (no `/` inside). `+` stays `+` in a path.
 * Returns `undefined` when the segment is malformed.
 */
export function decodePathSegment(raw: string): string | undefined {
  return hasValidSyntax(raw, PCHAR_RAW) ? decodeUtf8(raw) : undefined;
}

/**
 * Decodes one query key or value (already split on `&` and the first `=`),
 * with `application/x-www-form-urlencoded` `+` meaning space (spec 020: "normal
 * URL query encoding"). Returns `undefined` when it is malformed.
 */
export function decodeQueryComponent(raw: string): string | undefined {
  return hasValidSyntax(raw, QUERY_RAW) ? decodeUtf8(raw.replace(/\+/g, ' ')) : undefined;
}

/** True when `host` is a syntactically valid RFC 3986 `reg-name` (non-empty, escapes well-formed). */
export function isRegName(host: string): boolean {
  return host.length > 0 && hasValidSyntax(host, REG_NAME_RAW);
}

/**
 * Canonical percent-encoding of a query key or value, or a path segment's
 * text: UTF-8, every octet outside `unreserved` escaped as upper-case `%HH`.
 * Precondition: `value` is well-formed Unicode (the name validators ensure it);
 * a lone surrogate makes this throw `URIError`.
 */
export function encodeComponent(value: string): string {
  return encodeURIComponent(value).replace(EXTRA_ESCAPES, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Encodes a decoded value as one path segment. The values `.` and `..` are
 * escaped as `%2E` / `%2E%2E`, because the parser refuses raw dot-segments
 * (RFC 3986 §5.2.4 would remove them) while a step or topic may be named so.
 */
export function encodePathSegment(value: string): string {
  if (value === '.') return '%2E';
  if (value === '..') return '%2E%2E';
  return encodeComponent(value);
}
