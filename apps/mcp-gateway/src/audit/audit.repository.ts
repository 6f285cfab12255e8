import type { OutboxEntry } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';

/** Filters of `GET /api/v1/audit` (all optional; `limit` 1–500, default 100; newest first). */
export interface AuditQuery {
  category?: string;
  action?: string;
  actor?: string;
  outcome?: string;
  /** RFC 3339 bounds, inclusive. */
  from?: string;
  to?: string;
  /** Opaque cursor from the previous page. */
  cursor?: string;
  limit?: number;
}

interface AuditRow {
  id: string;
  at: Date;
  category: string;
  action: string;
  actor: string;
  principal_id: string;
  credential_type: string;
  target: string | null;
  outcome: string;
  duration_ms: number | null;
  request_id: string | null;
  details: Record<string, unknown> | null;
  on_behalf_of: Record<string, unknown> | null;
}

/** Reads the audit trail with filters and keyset paging (the cursor is the last id, base64url). */
export async function queryAudit(pool: Pool, q: AuditQuery): Promise<{ items: unknown[]; nextCursor?: string }> {
  const where: string[] = [];
  const args: unknown[] = [];
  const add = (sql: string, value: unknown): void => {
    args.push(value);
    where.push(sql.replace('?', `$${args.length}`));
  };
  if (q.category !== undefined) add('category = ?', q.category);
  if (q.action !== undefined) add('action = ?', q.action);
  if (q.actor !== undefined) add('actor = ?', q.actor);
  if (q.outcome !== undefined) add('outcome = ?', q.outcome);
  if (q.from !== undefined) add('at >= ?', q.from);
  if (q.to !== undefined) add('at <= ?', q.to);
  if (q.cursor !== undefined) add('id < ?', Buffer.from(q.cursor, 'base64url').toString('utf8'));
  const limit = q.limit ?? 100;
  args.push(limit + 1);
  const { rows } = await pool.query<AuditRow>(
    `SELECT * FROM audit_events ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${args.length}`,
    args,
  );
  const page = rows.slice(0, limit);
  const items = page.map((r) => ({
    id: r.id,
    at: r.at.toISOString(),
    category: r.category,
    action: r.action,
    actor: r.actor,
    principalId: r.principal_id,
    credentialType: r.credential_type,
    // The person a published agent acted for.
    onBehalfOf: r.on_behalf_of ?? undefined,
    target: r.target ?? undefined,
    outcome: r.outcome,
    durationMs: r.duration_ms ?? undefined,
    requestId: r.request_id ?? undefined,
    details: r.details ?? undefined,
  }));
  const last = page[page.length - 1];
  return rows.length > limit && last !== undefined
    ? { items, nextCursor: Buffer.from(last.id).toString('base64url') }
    : { items };
}

/**
 * Deletes the audit rows of unauthenticated traffic (no principal: stored as
 * `principal_id = 'unknown'`) older than `cutoff`; rows with an author are
 * never deleted here.
 *
 * @returns the number of rows deleted.
 */
export async function deleteUnauthenticatedBefore(pool: Pool, cutoff: Date): Promise<number> {
  const result = await pool.query("DELETE FROM audit_events WHERE principal_id = 'unknown' AND at < $1", [cutoff]);
  return result.rowCount ?? 0;
}

/**
 * Inserts entries drained from services' mutation outboxes, each at most once
 * per `(source, sourceId)`: the drains deliver at least once, so a second
 * delivery changes nothing. Category = the service (`dag`, `run`, `wiki`),
 * outcome `succeeded` (only committed changes are in an outbox). The person a
 * published agent acted for travels in the record's `details.onBehalfOf` and is lifted
 * into its own column. One statement for the whole batch.
 *
 * @returns how many entries were new.
 */
export async function insertOutboxEntries(pool: Pool, entries: readonly OutboxEntry[]): Promise<number> {
  if (entries.length === 0) return 0;
  const column = <T>(pick: (entry: OutboxEntry) => T): T[] => entries.map(pick);
  const result = await pool.query(
    `INSERT INTO audit_events (at, category, action, actor, principal_id, credential_type, target, outcome, request_id, details, source, source_id, on_behalf_of)
     SELECT u.at, u.source, u.action, u.actor, u.principal_id, u.credential_type, u.target, 'succeeded', u.request_id,
            CASE WHEN u.details ? 'onBehalfOf' THEN NULLIF(u.details - 'onBehalfOf', '{}'::jsonb) ELSE u.details END,
            u.source, u.source_id, u.details -> 'onBehalfOf'
       FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::jsonb[], $10::text[])
            AS u(at, source, action, actor, principal_id, credential_type, target, request_id, details, source_id)
     ON CONFLICT (source, source_id) WHERE source IS NOT NULL DO NOTHING`,
    [
      column((e) => e.at),
      column((e) => e.source),
      column((e) => e.action),
      column((e) => e.actor),
      column((e) => e.principalId),
      column((e) => e.credentialType),
      column((e) => e.target),
      column((e) => e.requestId),
      column((e) => (e.details === null ? null : JSON.stringify(e.details))),
      column((e) => e.sourceId),
    ],
  );
  return result.rowCount ?? 0;
}

/** A gateway audit event as queued for writing: stamped, with its own id (`source_id`). */
export interface StoredAuditEvent {
  readonly id: string;
  readonly at: Date;
  readonly category: string;
  readonly action: string;
  readonly principal:
    | {
        readonly subject: string;
        readonly id: string;
        readonly credentialType: string;
        readonly onBehalfOf?: { readonly kind: string; readonly id: string; readonly name: string } | undefined;
      }
    | undefined;
  readonly target?: string;
  readonly outcome: string;
  readonly durationMs?: number;
  readonly requestId?: string;
  readonly details?: Record<string, unknown>;
}

/** `source` of the gateway's own audit rows: with the event's id, what makes a written-again batch change nothing. */
export const GATEWAY_AUDIT_SOURCE = 'mcp-gateway';

/**
 * Inserts the gateway's own audit events, each at most once (`source`
 * `mcp-gateway`, `source_id` the event's id): a batch written again after
 * its answer was lost changes nothing. One statement for the whole batch,
 * with the same 13 parameters whatever its size (a named statement).
 *
 * @returns how many events were new.
 */
export async function insertGatewayEvents(pool: Pool, events: readonly StoredAuditEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const column = <T>(pick: (event: StoredAuditEvent) => T): T[] => events.map(pick);
  const result = await pool.query(
    `INSERT INTO audit_events (at, category, action, actor, principal_id, credential_type, target, outcome, duration_ms, request_id, details, source, source_id, on_behalf_of)
     SELECT u.at, u.category, u.action, u.actor, u.principal_id, u.credential_type, u.target, u.outcome, u.duration_ms, u.request_id, u.details, '${GATEWAY_AUDIT_SOURCE}', u.source_id, u.on_behalf_of
       FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::double precision[], $10::text[], $11::jsonb[], $12::text[], $13::jsonb[])
            AS u(at, category, action, actor, principal_id, credential_type, target, outcome, duration_ms, request_id, details, source_id, on_behalf_of)
     ON CONFLICT (source, source_id) WHERE source IS NOT NULL DO NOTHING`,
    [
      column((e) => e.at),
      column((e) => e.category),
      column((e) => e.action),
      column((e) => e.principal?.subject ?? 'unknown'),
      column((e) => e.principal?.id ?? 'unknown'),
      column((e) => e.principal?.credentialType ?? 'none'),
      column((e) => e.target ?? null),
      column((e) => e.outcome),
      column((e) => e.durationMs ?? null),
      column((e) => e.requestId ?? null),
      column((e) => (e.details === undefined ? null : JSON.stringify(e.details))),
      column((e) => e.id),
      column((e) => (e.principal?.onBehalfOf === undefined ? null : JSON.stringify(e.principal.onBehalfOf))),
    ],
  );
  return result.rowCount ?? 0;
}
