import { z } from 'zod';
import { ServiceErrorSchema } from './errors';
import { PrincipalSchema, type Role } from './principal';

/** W3C trace context carried across the bus (only `traceparent`/`tracestate`). */
export const TraceContextSchema = z.object({
  traceparent: z.string().optional(),
  tracestate: z.string().optional(),
});
export type TraceContext = z.infer<typeof TraceContextSchema>;

/**
 * The envelope of every bus request (docs/architecture.md "Request flow").
 * `deadline` is epoch milliseconds: a service drops a job past it and never
 * applies a mutation after it. `replyTo` is the channel the caller listens on.
 * `requestId` (optional) is the id of the gateway request the call serves,
 * the one its logs and `details.requestId` carry; services log it with the job
 * and record it with each change (the mutation record).
 */
export const BusRequestSchema = z.object({
  op: z.string().min(1),
  payload: z.unknown(),
  principal: PrincipalSchema,
  deadline: z.number().int().positive(),
  traceContext: TraceContextSchema.default({}),
  replyTo: z.string().min(1),
  requestId: z.string().min(1).max(128).optional(),
  /**
   * The caller's idempotency key of a mutation, scoped by the
   * service to `principal.id`: the same key with the same payload within 24 h
   * returns the original result, with another payload `conflict`.
   */
  idempotencyKey: z.string().min(1).max(255).optional(),
});
export type BusRequest = z.infer<typeof BusRequestSchema>;

/** A reply: `{ok: true, data}` or `{ok: false, error}`. */
export const BusReplySchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), data: z.unknown() }),
  z.object({ ok: z.literal(false), error: ServiceErrorSchema }),
]);
export type BusReply = z.infer<typeof BusReplySchema>;

/** What travels on a reply channel: the job id it answers, and the reply. */
export const ReplyMessageSchema = z.object({ id: z.string(), reply: BusReplySchema });
export type ReplyMessage = z.infer<typeof ReplyMessageSchema>;

/**
 * One operation of a service's catalog.
 * - `request` / `reply`: schemas both sides validate with.
 * - `timeoutMs`: the caller's deadline for this op (default: the gateway's, 10 s).
 * - `mutation`: true when the op writes; a mutation is never applied after its
 *   deadline and never run again automatically (no BullMQ retry, no second run
 *   after its replica stopped mid-way: the caller gets `details.outcome: "unknown"`).
 * - `attempts`: how many times a transient failure is tried (default 1 = no
 *   retry); ignored for a mutation.
 * - `carriesSecret`: the request payload holds a secret (a workbook password):
 *   its job is removed from Redis when it fails as well as when it completes,
 *   and the caller removes it when the deadline passes before a replica took
 *   it, so no key outlives the call (docs/decisions.md "Workbook reads").
 * - `role`: the lowest role that may call the op (dagu-model §9; every higher
 *   role may too). The one place an op's role is written: the gateway's
 *   actions, its REST routes and the services' re-checks all read it
 *   (`requireOpRole`, `role-check.ts`). Every op of the product catalogs
 *   (`ops.ts`) declares one; test catalogs may leave it out.
 * - `roleFor`: when the role depends on the request (a start of inline YAML is
 *   authoring), the role for this request; `role` is then the lowest it can be.
 */
export interface OpDefinition<Req extends z.ZodType = z.ZodType, Rep extends z.ZodType = z.ZodType> {
  readonly request: Req;
  readonly reply: Rep;
  readonly role?: Role;
  // A method signature (not a property) so a catalog's typed request is accepted where `unknown` is declared.
  roleFor?(request: z.output<Req>): Role;
  readonly timeoutMs?: number;
  readonly mutation: boolean;
  readonly attempts?: number;
  readonly carriesSecret?: boolean;
}

/** A service's op catalog: op name → definition. */
export type OpCatalog = Record<string, OpDefinition>;

/** Declares a catalog while keeping its literal types (for the typed handler map). */
export function defineOps<const T extends OpCatalog>(catalog: T): T {
  return catalog;
}

export type OpRequest<C extends OpCatalog, K extends keyof C> = z.input<C[K]['request']>;
export type OpReply<C extends OpCatalog, K extends keyof C> = z.output<C[K]['reply']>;

/** Every service answers `ping` (readiness probes and the foundation's round-trip tests). */
export const PingRequestSchema = z.object({}).strict();
export const PingReplySchema = z.object({ service: z.string(), replica: z.string(), at: z.string() });
