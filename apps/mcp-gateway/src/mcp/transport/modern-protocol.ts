import type { ClientCapabilities, LoggingLevel, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { LoggingLevelSchema } from '@modelcontextprotocol/sdk/types.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from './protocol';

/**
 * The wire facts of the stateless MCP revision 2026-07-28 the gateway needs
 * (mcp-revisions §2). Written here rather than taken from
 * `@modelcontextprotocol/core` 2.x: the gateway validates with the SDK 1.x
 * schemas everywhere else and needs only these few keys, codes and checks
 * (docs/decisions.md).
 */

/** Stateless revisions served, newest first. */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;
export type ModernProtocolVersion = (typeof MODERN_PROTOCOL_VERSIONS)[number];
/** Every revision served on the endpoint, newest first (`server/discover`, `-32022` `data.supported`). */
export const ALL_PROTOCOL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS];

/** `params._meta` keys of the revision. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** JSON-RPC codes the revision reserves (mcp-revisions §2 "Errors"). */
export const HEADER_MISMATCH = -32020;
export const MISSING_CLIENT_CAPABILITY = -32021;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** True when `value` names a stateless revision the gateway serves. */
export function isModernVersion(value: unknown): value is ModernProtocolVersion {
  return typeof value === 'string' && (MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(value);
}

/** `params._meta` of a JSON-RPC message, or `undefined`. */
export function metaOf(message: unknown): Record<string, unknown> | undefined {
  if (!isRecord(message) || !isRecord(message.params)) return undefined;
  const meta = message.params._meta;
  return isRecord(meta) ? meta : undefined;
}

/**
 * The revision a POST body names in `params._meta["io.modelcontextprotocol/protocolVersion"]`
 * (a single message; batches belong to 2025-03-26), or `undefined` when it names none —
 * which is how a request picks the stateless path (mcp-revisions §2 "Dual era").
 */
export function metaVersionOf(body: unknown): string | undefined {
  const version = metaOf(body)?.[META.protocolVersion];
  return typeof version === 'string' ? version : undefined;
}

/**
 * Decodes a header value sent as `=?base64?<base64>?=` (non-ASCII values,
 * mcp-revisions §2); other values are returned trimmed.
 */
export function decodeHeaderValue(value: string): string {
  const trimmed = value.trim();
  const encoded = /^=\?base64\?(.*)\?=$/i.exec(trimmed);
  return encoded === null ? trimmed : Buffer.from(encoded[1] ?? '', 'base64').toString('utf8');
}

/**
 * The params field `Mcp-Name` must equal, per method (mcp-revisions §2 "Required headers";
 * the tasks extension's methods carry the task id, SEP-2663 "Routing Headers", mcp-revisions §4).
 */
const NAME_FIELD: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'resources/read': 'uri',
  'prompts/get': 'name',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/**
 * Checks the required headers of a stateless POST against its body:
 * `MCP-Protocol-Version` equals the `_meta` version, `Mcp-Method` the method,
 * `Mcp-Name` the tool name / resource URI / prompt name / task id. Returns the message
 * of a `-32020` error, or `undefined` when they agree.
 *
 * @param header - reads one request header (case-insensitive), `undefined` when absent
 */
export function headerMismatch(
  header: (name: string) => string | undefined,
  method: string,
  params: unknown,
  version: string,
): string | undefined {
  const sentVersion = header('mcp-protocol-version');
  if (sentVersion === undefined || sentVersion.trim() !== version)
    return `Header mismatch: MCP-Protocol-Version must equal params._meta["${META.protocolVersion}"] (${version}).`;
  const sentMethod = header('mcp-method');
  if (sentMethod === undefined || decodeHeaderValue(sentMethod) !== method)
    return `Header mismatch: Mcp-Method must equal the request's method (${method}).`;
  const field = NAME_FIELD[method];
  if (field === undefined) return undefined;
  const expected = isRecord(params) ? params[field] : undefined;
  const sentName = header('mcp-name');
  if (sentName === undefined || typeof expected !== 'string' || decodeHeaderValue(sentName) !== expected)
    return `Header mismatch: Mcp-Name must equal params.${field} of ${method}.`;
  return undefined;
}

/** What a stateless request says about its client (its `_meta` envelope). */
export interface RequestEnvelope {
  readonly protocolVersion: ModernProtocolVersion;
  readonly clientCapabilities: ClientCapabilities;
  readonly clientInfo: unknown;
  /** `_meta["io.modelcontextprotocol/logLevel"]`; absent: no log messages are sent (SEP-2575). */
  readonly logLevel: LoggingLevel | undefined;
}

/** Reads the `_meta` envelope of a stateless request whose version was already checked. */
export function envelopeOf(meta: Record<string, unknown> | undefined, version: ModernProtocolVersion): RequestEnvelope {
  const capabilities = meta?.[META.clientCapabilities];
  const level = LoggingLevelSchema.safeParse(meta?.[META.logLevel]);
  return {
    protocolVersion: version,
    clientCapabilities: isRecord(capabilities) ? capabilities : {},
    clientInfo: meta?.[META.clientInfo],
    logLevel: level.success ? level.data : undefined,
  };
}

/** Methods whose results carry cache hints (`ttlMs`, `cacheScope`). */
const CACHEABLE = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'server/discover',
]);

/**
 * Cache hints per method, *ours*: the catalogs (tools, prompts, resources,
 * templates, discovery) change only with a gateway release or an extension,
 * so a minute; resource reads are live run and wiki state read with the
 * caller's rights, so 0 and private. Everything is `private`: lists and
 * reads depend on the authentication context.
 */
function cacheHintsOf(method: string): { ttlMs: number; cacheScope: 'public' | 'private' } {
  return { ttlMs: method === 'resources/read' ? 0 : 60_000, cacheScope: 'private' };
}

/**
 * A result as the stateless revision sends it: `resultType` (default
 * `complete`), `_meta["io.modelcontextprotocol/serverInfo"]`, and for list and
 * read methods the cache hints (kept when the handler set them).
 */
export function decorateResult(
  method: string,
  result: Record<string, unknown>,
  serverInfo: Record<string, unknown>,
): Record<string, unknown> {
  const meta = isRecord(result._meta) ? result._meta : {};
  const decorated: Record<string, unknown> = {
    ...result,
    resultType: typeof result.resultType === 'string' ? result.resultType : 'complete',
    _meta: { ...meta, [META.serverInfo]: serverInfo },
  };
  if (CACHEABLE.has(method) && decorated.resultType === 'complete') {
    const hints = cacheHintsOf(method);
    if (typeof decorated.ttlMs !== 'number') decorated.ttlMs = hints.ttlMs;
    if (decorated.cacheScope !== 'public' && decorated.cacheScope !== 'private')
      decorated.cacheScope = hints.cacheScope;
  }
  return decorated;
}

/** The notification `_meta` that ties a change notification to its `subscriptions/listen` request. */
export function subscriptionMeta(id: RequestId): Record<string, unknown> {
  return { [META.subscriptionId]: id };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
