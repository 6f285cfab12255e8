import { z } from 'zod';

/**
 * The mutation record every service keeps in its own schema, in the same
 * transaction as the change (docs/decisions.md
 * "Attribution and mutation outcomes"). These are the shapes that cross the bus.
 */

/**
 * `mutation.outcome` request: the mutation whose fate the caller asks about, by
 * its bus job id (the gateway's bus client, right after a deadline passed) or
 * by the id of the gateway request that sent it (`details.requestId` of an
 * `outcome: "unknown"` answer, dagu-model §10).
 */
export const MutationOutcomeRequestSchema = z.union([
  z.strictObject({ jobId: z.string().min(1).max(200) }),
  z.strictObject({ requestId: z.string().min(1).max(200) }),
]);
export type MutationOutcomeRequest = z.infer<typeof MutationOutcomeRequestSchema>;

/**
 * `mutation.outcome` reply: `applied` true when the job's change committed
 * (its record exists); `result` is the reply the job gave, when it was
 * recorded (a replica that died between COMMIT and recording it leaves none).
 * Asked by request id, it is the first change that request made in the service.
 * `applied: false` is final once the mutation's bus deadline has passed (a
 * service never commits after it).
 */
export const MutationOutcomeReplySchema = z.object({
  applied: z.boolean(),
  result: z.unknown().optional(),
  requestId: z.string().optional(),
});
export type MutationOutcomeReply = z.infer<typeof MutationOutcomeReplySchema>;

/** The op every service answers about its own mutations (the service host adds it to each catalog). */
export const MUTATION_OUTCOME_OP = 'mutation.outcome';

/**
 * Its definition: not a mutation, a short deadline (the gateway asks it after
 * a mutation's own deadline passed). Kept out of the typed catalogs of
 * ops.ts so that every handler map and fake service stays as it is.
 */
export const MUTATION_OUTCOME_DEFINITION = {
  request: MutationOutcomeRequestSchema,
  reply: MutationOutcomeReplySchema,
  mutation: false,
  timeoutMs: 3000,
} as const;

/** `_meta` key of the idempotency key on MCP `tools/call`. */
export const IDEMPOTENCY_META_KEY = 'io.dagu/idempotencyKey';

/** An idempotency key: 1–255 visible ASCII characters (the REST `Idempotency-Key` header takes the same). */
export const IdempotencyKeySchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'must be 1–255 visible ASCII characters');

/** How long a key is remembered: the same key with the same payload within it returns the original result. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

/**
 * One audit entry drained from a service's outbox to the gateway's audit
 * trail (the BullMQ queue {@link AUDIT_QUEUE}). `source` + `sourceId` make it
 * idempotent: the gateway inserts each at most once.
 */
export const OutboxEntrySchema = z.object({
  source: z.string().min(1),
  sourceId: z.string().min(1),
  at: z.string().refine((at) => !Number.isNaN(Date.parse(at)), 'not a timestamp'),
  action: z.string().min(1),
  actor: z.string(),
  principalId: z.string(),
  credentialType: z.string(),
  target: z.string().nullable(),
  requestId: z.string().nullable(),
  details: z.record(z.string(), z.unknown()).nullable(),
});
export type OutboxEntry = z.infer<typeof OutboxEntrySchema>;

/** The queue the services' outbox drains feed and the gateway consumes (under `BUS_PREFIX`). */
export const AUDIT_QUEUE = 'audit-trail';

/**
 * The queue the services' outbox drains send whole drain passes to
 * ({@link OutboxBatchSchema}, one job per pass; under `BUS_PREFIX`). A queue
 * of its own, not {@link AUDIT_QUEUE}: a gateway from before the batches
 * would take a batch for a malformed entry and drop it, while a job waiting
 * here is stored once a gateway that reads batches runs (rolling upgrades in
 * any order). Gateways consume both queues.
 */
export const AUDIT_BATCH_QUEUE = 'audit-trail-batches';

/**
 * The data of an {@link AUDIT_BATCH_QUEUE} job: the rows one drain pass
 * claimed, in row order. Entries are checked one by one by the consumer
 * ({@link OutboxEntrySchema}), so one bad entry costs only itself.
 */
export const OutboxBatchSchema = z.object({ entries: z.array(z.unknown()).min(1) });
export interface OutboxBatch {
  entries: OutboxEntry[];
}

/**
 * The queue run-service consumes the cross-service effects of DAG changes
 * from (under `BUS_PREFIX`): dag-service's outbox drain adds one job per
 * `dag.renamed` row (data: the {@link OutboxEntry}, job id
 * `<source>-<row id>`), and run-service moves the DAG's run history (Dagu
 * spec 022b `rename_dag`; docs/decisions.md).
 */
export const DAG_MOVES_QUEUE = 'dag-moves';
