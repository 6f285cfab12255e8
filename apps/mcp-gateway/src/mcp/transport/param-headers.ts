/**
 * Tool parameters mirrored into `Mcp-Param-{Name}` headers (SEP-2243, the 2026-07-28
 * revision; mcp-revisions §2 "Required headers"): a property of a tool's input schema
 * annotated `"x-mcp-header": "<Name>"` is sent by the client as that header too, so that
 * proxies in front of the gateway can route or rate-limit by it without reading bodies. The
 * gateway checks the header against the body; a disagreement is HTTP 400 with JSON-RPC
 * `-32020`, like `Mcp-Name`.
 */

/** One annotated parameter: its header name, where it sits in the arguments, its JSON type. */
export interface ParamHeader {
  /** The `<Name>` of `Mcp-Param-<Name>`. */
  readonly name: string;
  /** Property names from the arguments object down to the parameter (nesting allowed). */
  readonly path: readonly string[];
  readonly type: 'string' | 'integer' | 'number' | 'boolean';
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const PRIMITIVES: readonly unknown[] = ['string', 'integer', 'number', 'boolean'];
const isPrimitive = (type: unknown): type is ParamHeader['type'] => PRIMITIVES.includes(type);

/**
 * The annotated parameters of an input schema, reached through chains of `properties` only
 * (SEP-2243: an annotation under `items`, a combinator or `$defs` is not a header).
 *
 * @returns the declarations, in schema order; empty when there are none
 */
export function paramHeadersOf(inputSchema: unknown, path: readonly string[] = []): ParamHeader[] {
  if (!isRecord(inputSchema) || !isRecord(inputSchema.properties)) return [];
  const found: ParamHeader[] = [];
  for (const [key, property] of Object.entries(inputSchema.properties)) {
    if (!isRecord(property)) continue;
    const name = property['x-mcp-header'];
    const type = property.type;
    if (typeof name === 'string' && isPrimitive(type)) found.push({ name, path: [...path, key], type });
    found.push(...paramHeadersOf(property, [...path, key]));
  }
  return found;
}

/** Strict Base64 (RFC 4648 §4, padded): what a `=?base64?…?=` value must hold. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A header value as text: the value without surrounding whitespace, or the UTF-8 text of
 * its Base64 when wrapped as `=?base64?…?=`; `undefined` when the wrapped Base64 is
 * invalid (bad characters or padding). A value missing either end of the wrapper is
 * literal text.
 */
export function paramHeaderText(value: string): string | undefined {
  const trimmed = value.trim();
  const wrapped = /^=\?base64\?(.*)\?=$/i.exec(trimmed);
  if (wrapped === null) return trimmed;
  const encoded = wrapped[1] ?? '';
  return BASE64.test(encoded) ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let at: unknown = args;
  for (const key of path) {
    if (!isRecord(at)) return undefined;
    at = at[key];
  }
  return at;
}

/** Whether header text `text` says the body's `value` (numbers compared as numbers, within 1e-9 relative). */
function agrees(text: string, value: unknown): boolean {
  if (typeof value === 'string') return text === value;
  if (typeof value === 'boolean') return text === String(value);
  if (typeof value === 'number') {
    if (text === '' || !Number.isFinite(Number(text))) return false;
    const sent = Number(text);
    return Math.abs(sent - value) <= 1e-9 * Math.max(1, Math.abs(value));
  }
  return false;
}

/**
 * Checks a `tools/call`'s `Mcp-Param-*` headers against its arguments: a parameter present
 * in the body (not null) needs its header with the same value; one absent from the body
 * must not have one.
 *
 * @param header - reads one request header (case-insensitive), `undefined` when absent
 * @returns the message of a `-32020` error, or `undefined` when they agree
 */
export function paramHeaderMismatch(
  header: (name: string) => string | undefined,
  declared: readonly ParamHeader[],
  args: unknown,
): string | undefined {
  for (const param of declared) {
    const headerName = `Mcp-Param-${param.name}`;
    const sent = header(headerName.toLowerCase());
    const value = valueAt(args, param.path);
    const where = `arguments.${param.path.join('.')}`;
    if (value === undefined || value === null) {
      if (sent !== undefined) return `Header mismatch: ${headerName} is sent but ${where} is absent.`;
      continue;
    }
    if (sent === undefined) return `Header mismatch: ${headerName} must carry ${where}.`;
    const text = paramHeaderText(sent);
    if (text === undefined) return `Header mismatch: ${headerName} holds invalid Base64.`;
    if (!agrees(text, value)) return `Header mismatch: ${headerName} must equal ${where}.`;
  }
  return undefined;
}
