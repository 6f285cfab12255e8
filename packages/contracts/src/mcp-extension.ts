import { z } from 'zod';
import { PrincipalSchema, RoleSchema } from './principal';

/**
 * Wire protocol of MCP extensions: services that add tools, resources and
 * prompts to the gateway's MCP surface over Redis (the bus). The gateway
 * (`mcp/extensions/extension-router.ts`) and every extension share this
 * file, so it lives in contracts rather than in either side. The only
 * supported way to write one is `@dagu-mcp/service-kit`'s `ExtensionService`
 * (docs/extending.md). The gateway serves an extension only when an
 * admin enabled it (`PUT /api/v1/extensions/{name}`) or its name is in the
 * static `MCP_EXTENSIONS` list; its tools and prompts are then namespaced
 * `<name>.<tool>`. Only a protocol test fixture (`MCP_TEST_FIXTURE_EXTENSIONS`:
 * the MCP conformance fixture under `test/fixtures/`) is served as announced.
 *
 * Keys and channels (prefix `p` = `BUS_PREFIX`):
 *
 * 1. Catalog — the extension keeps `<p>:mcp:ext:<name>:catalog` (JSON
 *    {@link ExtensionCatalog}) set with a short TTL and refreshes it; a
 *    stopped extension disappears from the lists when it lapses.
 * 2. Calls — the gateway LPUSHes an {@link ExtensionCall} on
 *    `<p>:mcp:ext:<name>:calls`; the extension BRPOPs it.
 * 3. Events — while serving a call the extension PUBLISHes
 *    {@link ExtensionEvent}s on the call's `replyTo` (the serving gateway
 *    replica's channel): notifications, server→client requests, a request
 *    to close the SSE stream early (SEP-1699 polling), and finally the
 *    result or error.
 * 4. Replies — the gateway PUBLISHes {@link ExtensionReply}s on
 *    `<p>:mcp:ext:call:<callId>`: the client's answer to a server→client
 *    request, or `cancel` when the client cancelled the call.
 */

/** The Redis key of extension `name`'s catalog. */
export function catalogKey(prefix: string, name: string): string {
  return `${prefix}:mcp:ext:${name}:catalog`;
}
/** The Redis list extension `name` takes its calls from. */
export function callQueueKey(prefix: string, name: string): string {
  return `${prefix}:mcp:ext:${name}:calls`;
}
/** The channel the gateway publishes replies to call `callId` on. */
export function callChannel(prefix: string, callId: string): string {
  return `${prefix}:mcp:ext:call:${callId}`;
}

const Named = z.looseObject({ name: z.string().min(1) });

/** An extension's name: its Redis keys, its tool namespace (`<name>.<tool>`) and its admin switch. */
export const ExtensionNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,39}$/, 'a lowercase letter, then lowercase letters, digits or "-", at most 40 characters');

/**
 * A tool's (or prompt's) own name inside its extension (the gateway serves it as
 * `<extension>.<name>`, so the whole name stays within MCP's tool-name rules: 1–128 of
 * `A-Z a-z 0-9 _ - .`).
 */
export const ExtensionToolNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "_" or "-", at most 64');

/**
 * One tool of a catalog: an MCP `Tool` (`name`, `title`, `description`, `inputSchema`,
 * `annotations`) plus `minRole`, the least role a caller needs (default `viewer`), which the
 * gateway checks before the call reaches the extension.
 */
export const ExtensionToolSchema = z.looseObject({
  name: z.string().min(1),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()).optional(),
  minRole: RoleSchema.optional(),
});
export type ExtensionTool = z.infer<typeof ExtensionToolSchema>;

/** `PUT /api/v1/extensions/{name}`: serve the extension or not, optionally only some of its tools (own names). */
export const ExtensionSettingsSchema = z.strictObject({
  enabled: z.boolean(),
  allowedTools: z.array(ExtensionToolNameSchema).max(500).optional(),
});
export type ExtensionSettings = z.infer<typeof ExtensionSettingsSchema>;

/** What an extension serves; entries are MCP `Tool`, `Resource`, `ResourceTemplate` and `Prompt` objects, sent as is. */
export const ExtensionCatalogSchema = z.object({
  tools: z.array(ExtensionToolSchema).default([]),
  resources: z.array(z.looseObject({ uri: z.string().min(1), name: z.string() })).default([]),
  resourceTemplates: z.array(z.looseObject({ uriTemplate: z.string().min(1), name: z.string() })).default([]),
  prompts: z.array(Named).default([]),
  /** URI prefixes whose `resources/read`, subscribe and completion go to this extension, e.g. `test://`. */
  uriPrefixes: z.array(z.string().min(1)).default([]),
});
export type ExtensionCatalog = z.infer<typeof ExtensionCatalogSchema>;

/** Methods an extension may be asked to serve. */
export const EXTENSION_METHODS = [
  'tools/call',
  'resources/read',
  'prompts/get',
  'completion/complete',
  'resources/subscribe',
  'resources/unsubscribe',
] as const;

/** One call, as queued for the extension. `deadline` is epoch ms. */
export const ExtensionCallSchema = z.object({
  callId: z.string().min(1),
  method: z.enum(EXTENSION_METHODS),
  params: z.record(z.string(), z.unknown()),
  principal: PrincipalSchema,
  sessionId: z.string(),
  /** The client's capabilities (an extension may only send requests the client declared). */
  clientCapabilities: z.record(z.string(), z.unknown()),
  replyTo: z.string().min(1),
  deadline: z.number().int().positive(),
});
export type ExtensionCall = z.infer<typeof ExtensionCallSchema>;

const JsonRpcErrorShape = z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });

/** Extension → gateway, on the call's `replyTo`. `t` is always `ext` (the replica channel's routing tag). */
export const ExtensionEventSchema = z.discriminatedUnion('type', [
  z.object({
    t: z.literal('ext'),
    callId: z.string(),
    type: z.literal('notify'),
    notification: z.object({ method: z.string(), params: z.record(z.string(), z.unknown()).optional() }),
  }),
  z.object({
    t: z.literal('ext'),
    callId: z.string(),
    type: z.literal('request'),
    key: z.string(),
    request: z.object({ method: z.string(), params: z.record(z.string(), z.unknown()).optional() }),
  }),
  z.object({ t: z.literal('ext'), callId: z.string(), type: z.literal('close-stream') }),
  z.object({
    t: z.literal('ext'),
    callId: z.string(),
    type: z.literal('result'),
    result: z.record(z.string(), z.unknown()),
  }),
  z.object({ t: z.literal('ext'), callId: z.string(), type: z.literal('error'), error: JsonRpcErrorShape }),
]);
export type ExtensionEvent = z.infer<typeof ExtensionEventSchema>;

/** Gateway → extension, on `<p>:mcp:ext:call:<callId>`. */
export const ExtensionReplySchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('response'),
    key: z.string(),
    result: z.record(z.string(), z.unknown()).optional(),
    error: JsonRpcErrorShape.optional(),
  }),
  z.object({ type: z.literal('cancel') }),
]);
export type ExtensionReply = z.infer<typeof ExtensionReplySchema>;
