import { z } from 'zod';
import { WikiWorkspaceSchema } from './wiki';

/**
 * REST operations as tools: upstreams (a base URL, an allow-list,
 * a credential kept encrypted by agent-service and never returned), and
 * operations with versions (drafts and published versions). One published
 * version becomes one MCP tool on an agent's endpoint through a
 * `rest_operation` binding (agent.ts). agent-service owns all of it and makes
 * the upstream calls; the gateway never holds an upstream's credential.
 *
 * The shape of an operation version's `spec` (method, path template, where
 * each argument goes, input schema, limits) is checked by agent-service with
 * `OperationVersionSpecSchema` of `@dagu-mcp/rest-operations`; here it is a
 * JSON object (contracts import nothing of ours).
 */

/** An upstream's name: lower-case letters, digits and `-`, 1–63 characters. */
export const UPSTREAM_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** An operation's name (also its default tool name): MCP tool-name characters, 1–64. */
export const OPERATION_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

export const UpstreamNameSchema = z.string().regex(UPSTREAM_NAME_PATTERN, 'must match ^[a-z0-9][a-z0-9-]{0,62}$');
export const OperationNameSchema = z.string().regex(OPERATION_NAME_PATTERN, 'must match ^[A-Za-z0-9_.-]{1,64}$');

const HeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be an HTTP header name');
const HeaderValue = z
  .string()
  .max(4000)
  .refine((v) => !/[\r\n\0]/.test(v), 'may not contain line breaks');

/** How agent-service authenticates to the upstream; write-only. */
export const UpstreamCredentialInputSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('bearer'), token: z.string().min(1).max(8000) }),
  z.strictObject({
    type: z.literal('header'),
    header: HeaderName.refine(
      (h) => !['host', 'cookie', 'content-length', 'transfer-encoding', 'connection'].includes(h.toLowerCase()),
      'may not be Host, Cookie or a framing header',
    ),
    value: HeaderValue.pipe(z.string().min(1)),
  }),
  z.strictObject({ type: z.literal('query'), param: z.string().min(1).max(100), value: z.string().min(1).max(8000) }),
  z.strictObject({ type: z.literal('basic'), username: z.string().max(500), password: z.string().max(8000) }),
]);
export type UpstreamCredentialInput = z.infer<typeof UpstreamCredentialInputSchema>;

/** An allow-list entry: a host name, a `*.` wildcard, an IP address or a CIDR range. */
const AllowEntry = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^(\*\.)?[A-Za-z0-9.:-]+(\/\d{1,3})?$/, 'must be a host, *.domain, an IP address or a CIDR range');

/** `PUT …/upstreams/{name}` (bus: `upstream.put`): creates or replaces an upstream. */
export const UpstreamPutRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  name: UpstreamNameSchema,
  /** `https://billing.example.com/api`: http or https, no credentials, query or fragment. */
  baseUrl: z.url({ protocol: /^https?$/ }).max(2000),
  /**
   * Hosts the calls may reach, checked after DNS resolution; default: the base URL's host when
   * it is a name, none when it is an IP address (calls stay on the base URL's origin anyway).
   * The list only narrows: a loopback, private or link-local address is reached only when the
   * deployment's `OUTBOUND_ALLOW_CIDRS` covers it, whatever an entry says.
   */
  allowHosts: z.array(AllowEntry).max(50).optional(),
  /** Write-only. Absent on a replace: the stored credential is kept; `null`: removed. */
  credential: UpstreamCredentialInputSchema.nullable().optional(),
  /** Sent with every call (not secret: they are returned by reads). */
  defaultHeaders: z.record(HeaderName, HeaderValue).optional(),
  /** Upper bound of every call's timeout, ms (an operation's own timeout is capped by it); default 10 000. */
  timeoutMs: z.number().int().min(100).max(60_000).optional(),
});
export type UpstreamPutRequest = z.infer<typeof UpstreamPutRequestSchema>;

export const UpstreamRefSchema = z.strictObject({ workspace: WikiWorkspaceSchema, name: UpstreamNameSchema });
export type UpstreamRef = z.infer<typeof UpstreamRefSchema>;

/** An upstream as reads show it: the credential by type (and header or parameter name) only. */
export const UpstreamViewSchema = z.object({
  workspace: z.string(),
  name: z.string(),
  baseUrl: z.string(),
  allowHosts: z.array(z.string()),
  credential: z
    .object({
      type: z.enum(['bearer', 'header', 'query', 'basic']),
      header: z.string().optional(),
      param: z.string().optional(),
    })
    .nullable(),
  defaultHeaders: z.record(z.string(), z.string()),
  timeoutMs: z.number().int(),
  version: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  createdBy: z.string(),
  updatedBy: z.string(),
});
export type UpstreamView = z.infer<typeof UpstreamViewSchema>;

export const UpstreamListReplySchema = z.object({ items: z.array(UpstreamViewSchema) });
export const UpstreamPutReplySchema = UpstreamViewSchema.extend({ created: z.boolean() });
export const UpstreamDeleteReplySchema = z.object({ name: z.string(), deleted: z.literal(true) });

/** An operation version's spec as JSON (its shape is checked by agent-service, see the top of this file). */
export const OperationSpecJsonSchema = z.record(z.string(), z.unknown());

export const OperationVersionStateSchema = z.enum(['draft', 'published']);

/** One version of an operation. A published version never changes; a draft is never served to agents. */
export const OperationVersionSchema = z.object({
  version: z.number().int(),
  state: OperationVersionStateSchema,
  spec: OperationSpecJsonSchema,
  createdAt: z.string(),
  createdBy: z.string(),
  publishedAt: z.string().nullable(),
  publishedBy: z.string().nullable(),
});
export type OperationVersion = z.infer<typeof OperationVersionSchema>;

/** An operation: its name, texts, and the numbers of its latest version and latest published version. */
export const OperationSummarySchema = z.object({
  workspace: z.string(),
  name: z.string(),
  title: z.string(),
  description: z.string(),
  latestVersion: z.number().int(),
  publishedVersion: z.number().int().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  createdBy: z.string(),
  updatedBy: z.string(),
});
export type OperationSummary = z.infer<typeof OperationSummarySchema>;

/** An operation with all its versions, newest first. */
export const OperationDetailSchema = OperationSummarySchema.extend({ versions: z.array(OperationVersionSchema) });
export type OperationDetail = z.infer<typeof OperationDetailSchema>;

export const OperationRefSchema = z.strictObject({ workspace: WikiWorkspaceSchema, name: OperationNameSchema });
export type OperationRef = z.infer<typeof OperationRefSchema>;

export const OperationListRequestSchema = z.strictObject({ workspace: WikiWorkspaceSchema });
export const OperationListReplySchema = z.object({ items: z.array(OperationSummarySchema) });

const Title = z.string().trim().min(1).max(200);
const Description = z.string().max(4000);

/** `POST …/operations` (bus `operation.create`): a new operation whose version 1 is a draft. */
export const OperationCreateRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  name: OperationNameSchema,
  title: Title.optional(),
  description: Description.optional(),
  spec: OperationSpecJsonSchema,
});
export type OperationCreateRequest = z.infer<typeof OperationCreateRequestSchema>;

/** `PATCH …/operations/{op}`: texts, and `spec` replaces the current draft's spec (409 when none is a draft). */
export const OperationUpdateRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  name: OperationNameSchema,
  title: Title.optional(),
  description: Description.optional(),
  spec: OperationSpecJsonSchema.optional(),
});
export type OperationUpdateRequest = z.infer<typeof OperationUpdateRequestSchema>;

/** `POST …/operations/{op}/versions`: a new draft (its spec given, else a copy of the latest version's). */
export const OperationNewVersionRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  name: OperationNameSchema,
  spec: OperationSpecJsonSchema.optional(),
});
export type OperationNewVersionRequest = z.infer<typeof OperationNewVersionRequestSchema>;

export const OperationPublishRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  name: OperationNameSchema,
  version: z.number().int().min(1),
});
export type OperationPublishRequest = z.infer<typeof OperationPublishRequestSchema>;

/**
 * What a write that agents may see answers: the operation, and the slugs of
 * the workspace's agents whose catalogs bind it (the gateway announces them,
 * so `tools/list` changes on every replica).
 */
export const OperationWriteReplySchema = OperationDetailSchema.extend({ boundAgents: z.array(z.string()) });
export type OperationWriteReply = z.infer<typeof OperationWriteReplySchema>;

export const OperationDeleteReplySchema = z.object({
  name: z.string(),
  deleted: z.literal(true),
  boundAgents: z.array(z.string()),
});

/** `POST …/operations/import` (bus `operation.import`): an OpenAPI 3 document → drafts for `upstream`. */
export const OperationImportRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  upstream: UpstreamNameSchema,
  document: z.record(z.string(), z.unknown()),
  /** Prefixed to every imported name (`billing_` → `billing_createRefund`). */
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{0,20}$/)
    .optional(),
});
export type OperationImportRequest = z.infer<typeof OperationImportRequestSchema>;

export const OperationImportReplySchema = z.object({
  /** Operations created, each with version 1 as a draft, and what the import changed on the way. */
  created: z.array(z.object({ name: z.string(), notes: z.array(z.string()) })),
  /** Operations of the document that could not become tools, with the reason. */
  refused: z.array(z.object({ operation: z.string(), reason: z.string() })),
  /** Names that already exist in the workspace: left as they are (curation stays explicit). */
  skipped: z.array(z.string()),
});
export type OperationImportReply = z.infer<typeof OperationImportReplySchema>;

/** A bound version: a version number, or `latest` (the newest published one). */
export const OperationVersionSelectorSchema = z.union([z.number().int().min(1), z.literal('latest')]);
export type OperationVersionSelector = z.infer<typeof OperationVersionSelectorSchema>;

/** `operation.tool`: the tool a binding publishes (published versions only). */
export const OperationToolRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  name: OperationNameSchema,
  version: OperationVersionSelectorSchema,
});
export type OperationToolRequest = z.infer<typeof OperationToolRequestSchema>;

export const OperationToolReplySchema = z.object({
  name: z.string(),
  version: z.number().int(),
  title: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  annotations: z.record(z.string(), z.boolean()),
  /** The longest a call of this version may take (every attempt, backoff and a margin), ms: the caller's deadline. */
  callTimeoutMs: z.number().int().positive().optional(),
});
export type OperationToolReply = z.infer<typeof OperationToolReplySchema>;

/** `operation.call`: one `tools/call` of a REST tool, made by agent-service. */
export const OperationCallRequestSchema = OperationToolRequestSchema.extend({
  arguments: z.record(z.string(), z.unknown()).default({}),
});
export type OperationCallRequest = z.infer<typeof OperationCallRequestSchema>;

/** An MCP `tools/call` result: text content, `structuredContent`, `isError`. */
export const OperationCallReplySchema = z.object({
  isError: z.boolean(),
  content: z.array(z.object({ type: z.literal('text'), text: z.string() })),
  structuredContent: z.record(z.string(), z.unknown()),
});
export type OperationCallReply = z.infer<typeof OperationCallReplySchema>;
