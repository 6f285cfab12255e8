import { z } from 'zod';

/**
 * What a published REST operation version says: which upstream, which
 * request, where each tool argument goes, and the limits of the call. Stored as JSON by the
 * service that owns operations; this schema is the one check of its shape.
 */

/** Where a tool argument goes in the upstream request. */
export const ArgumentLocationSchema = z.enum(['path', 'query', 'header', 'body']);
export type ArgumentLocation = z.infer<typeof ArgumentLocationSchema>;

/** HTTP methods an operation may use. */
export const OperationMethodSchema = z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);
export type OperationMethod = z.infer<typeof OperationMethodSchema>;

/** Methods that are idempotent by definition (RFC 9110 §9.2.2): only these are retried. */
export const IDEMPOTENT_METHODS: ReadonlySet<OperationMethod> = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

/** Response cap bounds, bytes: default 256 KiB, at most 4 MiB. */
export const RESPONSE_MAX_BYTES_DEFAULT = 256 * 1024;
export const RESPONSE_MAX_BYTES_LIMIT = 4 * 1024 * 1024;

/** Per-call timeout bounds, ms: default 10 s, at most 60 s. */
export const TIMEOUT_MS_DEFAULT = 10_000;
export const TIMEOUT_MS_LIMIT = 60_000;

/** Argument (tool input property) names: what MCP clients and JSON Schema keep as they are. */
const ARGUMENT_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/** Header names a tool argument may never set: the upstream's credential and routing are ours. */
export const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'authorization',
  'proxy-authorization',
  'cookie',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

/** One argument's placement: where it goes and under which wire name (default: its own name). */
export const ArgumentPlacementSchema = z.strictObject({
  in: ArgumentLocationSchema,
  name: z.string().min(1).max(100).optional(),
});
export type ArgumentPlacement = z.infer<typeof ArgumentPlacementSchema>;

/** JSON Schema (2020-12) of a tool's input: an object, flat at the root (no root oneOf/anyOf/allOf). */
export const FlatInputSchemaSchema = z
  .looseObject({
    type: z.literal('object'),
    properties: z.record(z.string(), z.unknown()).default({}),
    required: z.array(z.string()).optional(),
  })
  .refine((s) => !('oneOf' in s || 'anyOf' in s || 'allOf' in s), {
    message: 'the input schema must be flat at the root (no oneOf, anyOf or allOf): the clients refuse them',
  });

/** Tool annotations (MCP `ToolAnnotations` hints). */
export const OperationAnnotationsSchema = z.strictObject({
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

/**
 * One operation version. `pathTemplate` is a path relative to the upstream's base URL with
 * `{name}` placeholders; every placeholder must be a `path` argument and every `path`
 * argument a placeholder. `retries` is honoured only for idempotent methods.
 */
export const OperationVersionSpecSchema = z
  .strictObject({
    upstream: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'an upstream name'),
    method: OperationMethodSchema,
    pathTemplate: z
      .string()
      .min(1)
      .max(2000)
      .regex(/^\/[^?#]*$/, 'a path starting with / (no query or fragment)'),
    arguments: z.record(z.string().regex(ARGUMENT_NAME, 'an argument name'), ArgumentPlacementSchema).default({}),
    inputSchema: FlatInputSchemaSchema,
    annotations: OperationAnnotationsSchema.default({}),
    responseMaxBytes: z.number().int().min(1024).max(RESPONSE_MAX_BYTES_LIMIT).default(RESPONSE_MAX_BYTES_DEFAULT),
    timeoutMs: z.number().int().min(100).max(TIMEOUT_MS_LIMIT).default(TIMEOUT_MS_DEFAULT),
    retries: z.number().int().min(0).max(3).default(0),
  })
  .superRefine((spec, ctx) => {
    const placeholders = new Set([...spec.pathTemplate.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? ''));
    for (const name of placeholders) {
      if (spec.arguments[name]?.in !== 'path')
        ctx.addIssue({
          code: 'custom',
          path: ['pathTemplate'],
          message: `placeholder {${name}} has no path argument`,
        });
    }
    for (const [name, placement] of Object.entries(spec.arguments)) {
      if (placement.in === 'path' && !placeholders.has(placement.name ?? name))
        ctx.addIssue({
          code: 'custom',
          path: ['arguments', name],
          message: 'a path argument must appear in pathTemplate',
        });
      if (placement.in === 'header') {
        const wire = (placement.name ?? name).toLowerCase();
        if (!HEADER_NAME.test(wire) || FORBIDDEN_HEADERS.has(wire))
          ctx.addIssue({
            code: 'custom',
            path: ['arguments', name],
            message: `header ${wire} may not be set by input`,
          });
      }
      if (!(name in spec.inputSchema.properties))
        ctx.addIssue({ code: 'custom', path: ['arguments', name], message: 'not a property of inputSchema' });
    }
    if (spec.retries > 0 && !isIdempotent(spec))
      ctx.addIssue({ code: 'custom', path: ['retries'], message: 'only idempotent operations may be retried' });
  });
export type OperationVersionSpec = z.infer<typeof OperationVersionSpecSchema>;

/** True when a call may be repeated safely: an idempotent method, or a version annotated idempotent. */
export function isIdempotent(spec: Pick<OperationVersionSpec, 'method' | 'annotations'>): boolean {
  return IDEMPOTENT_METHODS.has(spec.method) || spec.annotations.idempotentHint === true;
}

/** How the upstream authenticates us (never the caller's credential). */
export const UpstreamCredentialSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('bearer'), token: z.string().min(1) }),
  z.strictObject({
    type: z.literal('header'),
    header: z
      .string()
      .regex(HEADER_NAME)
      .refine((h) => !['host', 'cookie', 'content-length'].includes(h.toLowerCase())),
    value: z.string().min(1),
  }),
  z.strictObject({ type: z.literal('query'), param: z.string().min(1).max(100), value: z.string().min(1) }),
  z.strictObject({ type: z.literal('basic'), username: z.string(), password: z.string() }),
]);
export type UpstreamCredential = z.infer<typeof UpstreamCredentialSchema>;

/** An upstream as the call needs it; the credential is decrypted only for the call. */
export interface Upstream {
  readonly name: string;
  /** `https://billing.internal/api` — its origin is the only one a call may reach. */
  readonly baseUrl: string;
  readonly credential?: UpstreamCredential;
  readonly defaultHeaders?: Readonly<Record<string, string>>;
}
