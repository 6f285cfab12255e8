import type { Pool } from '@dagu-mcp/runtime';
import type { Logger } from '@dagu-mcp/runtime';
import type { Principal } from '@dagu-mcp/contracts';
import { deleteUnauthenticatedBefore } from './audit.repository';
import { UnauthenticatedBudget } from './unauthenticated-budget';

/** One audit event (dagu-model §8). Never carries a secret. */
export interface AuditEvent {
  /** `mcp`, `auth`, `api_key`, `user`, `rest`. */
  readonly category: string;
  /** e.g. `mcp.tool_call.succeeded`, `auth.login.failed`, `api_key.revoked`. */
  readonly action: string;
  readonly principal: Principal | undefined;
  /** What was acted on: tool name + target, resource URI, username, key id. */
  readonly target?: string;
  /** `received`, `succeeded`, `failed`, `denied`. */
  readonly outcome: string;
  readonly durationMs?: number;
  readonly requestId?: string;
  readonly details?: Record<string, unknown>;
}

const FLUSH_INTERVAL_MS = 200;
const MAX_BATCH = 500;
const RETENTION_SWEEP_MS = 3_600_000;

/** Bounds of the audit rows of unauthenticated traffic (docs/security.md "Bounds and browser rules"). */
export interface UnauthenticatedAuditLimits {
  /** Rows per minute and replica (`AUDIT_UNAUTHENTICATED_PER_MINUTE`, default 600); the rest become one summary row. */
  readonly perMinute: number;
  /** Days such rows are kept (`AUDIT_UNAUTHENTICATED_RETENTION_DAYS`, default 7); swept hourly. */
  readonly retentionDays: number;
}

const DEFAULT_UNAUTHENTICATED_LIMITS: UnauthenticatedAuditLimits = { perMinute: 600, retentionDays: 7 };

/**
 * The audit trail, written to PostgreSQL off the request path: events are
 * queued and inserted in batches every 200 ms (or at 500 events), so
 * auditing adds no database round trip to a tool call. `flush()` on shutdown.
 * Events without a principal (unauthenticated traffic) are rate-limited and
 * kept only `retentionDays` ({@link UnauthenticatedAuditLimits}); the ones
 * over the rate are written as one `audit.unauthenticated.suppressed` row
 * with `details.dropped`.
 */
export class AuditLog {
  private queue: Array<AuditEvent & { at: Date }> = [];
  private readonly timer: NodeJS.Timeout;
  private readonly sweeper: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private readonly budget: UnauthenticatedBudget;
  private readonly limits: UnauthenticatedAuditLimits;

  constructor(private readonly deps: { pool: Pool; logger: Logger; unauthenticated?: UnauthenticatedAuditLimits }) {
    this.limits = deps.unauthenticated ?? DEFAULT_UNAUTHENTICATED_LIMITS;
    this.budget = new UnauthenticatedBudget(this.limits.perMinute);
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref();
    this.sweeper = setInterval(() => void this.sweepUnauthenticated(), RETENTION_SWEEP_MS);
    this.sweeper.unref();
  }

  /** Queues an event (timestamped now); an unauthenticated one only within its rate. */
  record(event: AuditEvent): void {
    if (event.principal === undefined && !this.budget.admit(Date.now())) return;
    this.queue.push({ ...event, at: new Date() });
    if (this.queue.length >= MAX_BATCH) void this.flush();
  }

  /**
   * Deletes the unauthenticated rows older than the retention (hourly on its
   * own; callable for tests and operations).
   *
   * @returns how many rows were deleted (0 when PostgreSQL failed: logged).
   */
  async sweepUnauthenticated(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.limits.retentionDays * 86_400_000);
    try {
      return await deleteUnauthenticatedBefore(this.deps.pool, cutoff);
    } catch (err) {
      this.deps.logger.warn({ err }, 'audit retention sweep failed');
      return 0;
    }
  }

  /** Writes every queued event. */
  async flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.sweeper);
    await this.flush();
  }

  private async write(): Promise<void> {
    const dropped = this.budget.takeDropped();
    if (dropped > 0) {
      this.queue.push({
        category: 'audit',
        action: 'audit.unauthenticated.suppressed',
        principal: undefined,
        outcome: 'suppressed',
        details: { dropped, perMinute: this.limits.perMinute },
        at: new Date(),
      });
    }
    if (this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.queue.length);
    const values: unknown[] = [];
    const rows = batch.map((e, i) => {
      const p = e.principal;
      values.push(
        e.at,
        e.category,
        e.action,
        p?.subject ?? 'unknown',
        p?.id ?? 'unknown',
        p?.credentialType ?? 'none',
        e.target ?? null,
        e.outcome,
        e.durationMs ?? null,
        e.requestId ?? null,
        e.details === undefined ? null : JSON.stringify(e.details),
      );
      const b = i * 11;
      return `($${b + 1},$${b + 2},$${b + 3},$${b + 4},$${b + 5},$${b + 6},$${b + 7},$${b + 8},$${b + 9},$${b + 10},$${b + 11})`;
    });
    try {
      await this.deps.pool.query(
        `INSERT INTO audit_events (at, category, action, actor, principal_id, credential_type, target, outcome, duration_ms, request_id, details)
         VALUES ${rows.join(',')}`,
        values,
      );
    } catch (err) {
      this.deps.logger.error({ err, lost: batch.length }, 'audit write failed');
    }
  }
}
