import { DaguError, IDEMPOTENCY_WINDOW_HOURS, type OutboxEntry, type Principal } from '@dagu-mcp/contracts';
import type { Pool, PoolClient } from './pool';
import { isUniqueViolation } from './pg-errors';

/**
 * The mutation record of a service (docs/decisions.md "Attribution and
 * mutation outcomes"): one row per change, written by the change's own
 * transaction into the owning service's schema. It is at once
 * - the audit outbox: drained (at least once) to the gateway's audit trail;
 * - the outcome record: whether bus job `job_id` committed, and its reply;
 * - the idempotency record: `(principal_id, idempotency_key)` for 24 h.
 *
 * Every service appends a migration running {@link MUTATION_LOG_SQL}; the
 * SQL of the table lives here, once, like the migration runner's own table.
 */
export const MUTATION_LOG_SQL = `
    CREATE TABLE mutation_log (
      id bigserial PRIMARY KEY,
      at timestamptz NOT NULL DEFAULT clock_timestamp(),
      job_id text NOT NULL,
      request_id text,
      action text NOT NULL,
      actor text NOT NULL,
      principal_id text NOT NULL,
      credential_type text NOT NULL,
      target text,
      details jsonb,
      idempotency_key text,
      payload_hash text,
      result jsonb,
      drained boolean NOT NULL DEFAULT false
    );
    CREATE INDEX mutation_log_job ON mutation_log (job_id);
    CREATE INDEX mutation_log_undrained ON mutation_log (id) WHERE NOT drained;
    CREATE UNIQUE INDEX mutation_log_idempotency ON mutation_log (principal_id, idempotency_key)
      WHERE idempotency_key IS NOT NULL;
`;

/**
 * The index that finds a change by the gateway request that sent it
 * (`mutation.outcome` by request id). Every service appends a
 * migration running it after {@link MUTATION_LOG_SQL}.
 */
export const MUTATION_LOG_REQUEST_INDEX_SQL = `
    CREATE INDEX mutation_log_request ON mutation_log (request_id) WHERE request_id IS NOT NULL;
`;

/**
 * Who made a change and under which bus job: the bus `HandlerContext` fits
 * this shape. `idempotencyKey` / `payloadHash` are set when the caller sent
 * a key.
 */
export interface MutationAuthor {
  readonly principal: Principal;
  readonly jobId: string;
  readonly requestId?: string | undefined;
  readonly idempotencyKey?: string | undefined;
  readonly payloadHash?: string | undefined;
}

/** What changed: a past-tense action (`dag.upserted`, `run.started`, …), its target and non-secret details. */
export interface MutationEntry {
  readonly action: string;
  readonly target?: string;
  readonly details?: Record<string, unknown>;
}

/** Anything that runs a statement: a transaction's client (a pool would commit the row on its own). */
export interface SqlClient {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

const WINDOW = `interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`;

/**
 * The INSERT of one record per row of `source`, parameters `$firstParam` on: the ten of
 * {@link recordValues}, then the reply (JSON, or NULL). The idempotency key goes on the job's
 * first row only (an op may record more than one change).
 */
function recordInsertSql(firstParam: number, source: string): string {
  const p = (i: number): string => `$${firstParam + i}`;
  return `INSERT INTO mutation_log (job_id, request_id, action, actor, principal_id, credential_type, target, details,
                            idempotency_key, payload_hash, result)
       SELECT ${p(0)}, ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}::jsonb,
              CASE WHEN ${p(8)}::text IS NULL OR EXISTS (SELECT 1 FROM mutation_log WHERE job_id = ${p(0)}) THEN NULL ELSE ${p(8)} END,
              ${p(9)}, ${p(10)}::jsonb
         FROM ${source}`;
}

/** {@link recordMutation}'s statement: one record, its reply left for later (`storeMutationResult`). */
const INSERT_SQL = recordInsertSql(1, '(SELECT 1) AS one');

/**
 * Records one change in the caller's open transaction `client`, so the change
 * and its record commit (or roll back) together: a change never lacks its
 * author. Never pass a secret in `details`.
 *
 * @throws DaguError `conflict` when another request of the same principal
 *   holds the same idempotency key right now (the transaction rolls back).
 */
export async function recordMutation(client: SqlClient, author: MutationAuthor, entry: MutationEntry): Promise<void> {
  try {
    await client.query(INSERT_SQL, [...recordValues(author, entry), null]);
  } catch (error) {
    if (isUniqueViolation(error)) throw idempotencyInFlight();
    throw error;
  }
}

/**
 * A mutation record written by the change's own statement, with the job's reply: the
 * `INSERT … SELECT` to put in a data-modifying CTE of that statement, so change, record and
 * reply commit in one statement, without a transaction around it (a run start is one
 * round trip). Its parameters are numbered from `firstParam`; it inserts one row per row of
 * `source` (a CTE or table name of the same statement), so it inserts nothing when the change
 * inserted nothing. The caller then calls {@link markReplyRecorded}.
 *
 * @param author     the bus job (as for {@link recordMutation}); its idempotency key is written as
 *                   recordMutation writes it (this is the job's first row: see its statement)
 * @param entry      what changed (never a secret in `details`)
 * @param reply      the reply the job will return, stored as JSON (what storeMutationResult stores)
 * @param firstParam the number of the fragment's first parameter (`$n`)
 * @param source     the CTE (or table) that must yield a row for the record to be written
 * @returns `sql` (the INSERT, no trailing semicolon) and its `values` (11, in order)
 */
export function mutationRecordInsert(
  author: MutationAuthor,
  entry: MutationEntry,
  reply: unknown,
  firstParam: number,
  source: string,
): { sql: string; values: unknown[] } {
  return {
    sql: recordInsertSql(firstParam, source),
    values: [...recordValues(author, entry), JSON.stringify(reply ?? null)],
  };
}

/** The ten values of a record, in {@link recordInsertSql}'s order. */
function recordValues(author: MutationAuthor, entry: MutationEntry): unknown[] {
  const p = author.principal;
  return [
    author.jobId,
    author.requestId ?? null,
    entry.action,
    p.subject,
    p.id,
    p.credentialType,
    entry.target ?? null,
    detailsOf(p, entry),
    author.idempotencyKey ?? null,
    author.payloadHash ?? null,
  ];
}

/**
 * A record's `details` as JSON: the entry's, with the person a published agent acted for
 * (`onBehalfOf`) beside them, so the record and the audit row drained from it
 * name both the agent (the actor) and the person.
 */
function detailsOf(principal: Principal, entry: MutationEntry): string | null {
  if (principal.onBehalfOf === undefined) return entry.details === undefined ? null : JSON.stringify(entry.details);
  return JSON.stringify({ ...entry.details, onBehalfOf: principal.onBehalfOf });
}

/** Whether a unique violation is a held idempotency key (the record's index), not the change's own. */
export function isIdempotencyViolation(error: unknown): boolean {
  return (
    isUniqueViolation(error) &&
    typeof error === 'object' &&
    error !== null &&
    'constraint' in error &&
    error.constraint === 'mutation_log_idempotency'
  );
}

/** Jobs whose reply was stored by their change's own statement ({@link mutationRecordInsert}). */
const repliesRecorded = new WeakSet<object>();

/**
 * Notes that the reply of `author`'s job was committed with its change, so the
 * handler wrapper skips its own `storeMutationResult` (one statement fewer).
 * `author` is the job's handler context object itself.
 */
export function markReplyRecorded(author: object): void {
  repliesRecorded.add(author);
}

/** Whether {@link markReplyRecorded} was called for this handler context. */
export function isReplyRecorded(author: object): boolean {
  return repliesRecorded.has(author);
}

/** The error a held idempotency key gives (the transaction or statement rolls back). */
export function idempotencyInFlight(): DaguError {
  return new DaguError('conflict', 'Another request with this idempotency key is being applied.', {
    field: 'idempotencyKey',
  });
}

/** What an idempotency key was last used for (within the window). */
export interface IdempotentRecord {
  readonly payloadHash: string | null;
  /** The recorded reply; `undefined` when the replica died before recording it. */
  readonly result: unknown;
  readonly requestId: string | null;
}

/**
 * The use of `key` by `principalId` within the last 24 h, if any. A use older
 * than the window is forgotten on the way (its key cleared), so the key can
 * be used again.
 */
export async function findIdempotent(
  pool: Pool,
  principalId: string,
  key: string,
): Promise<IdempotentRecord | undefined> {
  const { rows } = await pool.query<{ payload_hash: string | null; result: unknown; request_id: string | null }>(
    `WITH expired AS (
       UPDATE mutation_log SET idempotency_key = NULL
       WHERE principal_id = $1 AND idempotency_key = $2 AND at <= now() - ${WINDOW}
     )
     SELECT payload_hash, result, request_id FROM mutation_log
     WHERE principal_id = $1 AND idempotency_key = $2 AND at > now() - ${WINDOW}`,
    [principalId, key],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return { payloadHash: row.payload_hash, result: row.result ?? undefined, requestId: row.request_id };
}

/**
 * Stores the reply of job `jobId` on its rows (after COMMIT).
 * @returns whether the job recorded any change.
 */
export async function storeMutationResult(pool: Pool, jobId: string, result: unknown): Promise<boolean> {
  const { rowCount } = await pool.query('UPDATE mutation_log SET result = $2 WHERE job_id = $1', [
    jobId,
    JSON.stringify(result ?? null),
  ]);
  return (rowCount ?? 0) > 0;
}

/**
 * Whether job `jobId` of `principalId` committed a change, with its recorded
 * reply and request id (another principal's job reads as not applied).
 */
export async function mutationOutcomeOf(
  pool: Pool,
  jobId: string,
  principalId: string,
): Promise<{ applied: boolean; result?: unknown; requestId?: string }> {
  const { rows } = await pool.query<{ result: unknown; request_id: string | null }>(
    'SELECT result, request_id FROM mutation_log WHERE job_id = $1 AND principal_id = $2 ORDER BY id LIMIT 1',
    [jobId, principalId],
  );
  const row = rows[0];
  if (row === undefined) return { applied: false };
  return {
    applied: true,
    ...(row.result !== null && row.result !== undefined ? { result: row.result } : {}),
    ...(row.request_id !== null ? { requestId: row.request_id } : {}),
  };
}

/**
 * Whether the gateway request `requestId` of `principalId` committed a change
 * in this service, with the recorded reply of its first change (another
 * principal's request reads as not applied). Final once the request's bus
 * deadline has passed: a service never commits after it.
 */
export async function mutationOutcomeOfRequest(
  pool: Pool,
  requestId: string,
  principalId: string,
): Promise<{ applied: boolean; result?: unknown; requestId?: string }> {
  const { rows } = await pool.query<{ result: unknown }>(
    'SELECT result FROM mutation_log WHERE request_id = $1 AND principal_id = $2 ORDER BY id LIMIT 1',
    [requestId, principalId],
  );
  const row = rows[0];
  if (row === undefined) return { applied: false, requestId };
  return {
    applied: true,
    requestId,
    ...(row.result !== null && row.result !== undefined ? { result: row.result } : {}),
  };
}

interface OutboxRow {
  id: string;
  at: Date;
  action: string;
  actor: string;
  principal_id: string;
  credential_type: string;
  target: string | null;
  request_id: string | null;
  details: Record<string, unknown> | null;
}

/**
 * Takes up to `limit` undrained rows in the open transaction `client` (rows
 * another replica is draining are skipped), as audit entries of `source`.
 */
export async function claimUndrained(client: PoolClient, source: string, limit: number): Promise<OutboxEntry[]> {
  const { rows } = await client.query<OutboxRow>(
    `SELECT id, at, action, actor, principal_id, credential_type, target, request_id, details
     FROM mutation_log WHERE NOT drained ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return rows.map((row) => ({
    source,
    sourceId: String(row.id),
    at: row.at.toISOString(),
    action: row.action,
    actor: row.actor,
    principalId: row.principal_id,
    credentialType: row.credential_type,
    target: row.target,
    requestId: row.request_id,
    details: row.details,
  }));
}

/** Marks rows drained (in the transaction that claimed them). */
export async function markDrained(client: PoolClient, ids: readonly string[]): Promise<void> {
  await client.query('UPDATE mutation_log SET drained = true WHERE id = ANY($1::bigint[])', [ids]);
}

/**
 * Deletes drained rows older than the idempotency window.
 * @returns how many were deleted.
 */
export async function sweepMutationLog(pool: Pool): Promise<number> {
  const { rowCount } = await pool.query(`DELETE FROM mutation_log WHERE drained AND at <= now() - ${WINDOW}`);
  return rowCount ?? 0;
}
