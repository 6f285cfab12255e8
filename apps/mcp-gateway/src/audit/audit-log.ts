import { randomUUID } from 'node:crypto';
import { counter, registerGauge, type Logger, type Pool, type Registry } from '@dagu-mcp/runtime';
import type { Principal } from '@dagu-mcp/contracts';
import { deleteUnauthenticatedBefore, insertGatewayEvents, type StoredAuditEvent } from './audit.repository';
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
/** Longest wait between two writes while PostgreSQL keeps failing, ms (the wait doubles from {@link FLUSH_INTERVAL_MS}). */
const MAX_RETRY_MS = 5_000;

/** Default {@link AuditBuffer.maxEvents}. */
export const DEFAULT_AUDIT_BUFFER_MAX_EVENTS = 50_000;

/** Prometheus counter of audit events dropped past the buffer's bound. */
export const AUDIT_DROPPED_METRIC = 'dagu_audit_events_dropped_total';
/** Prometheus gauge of audit events waiting to be written. */
export const AUDIT_BUFFERED_METRIC = 'dagu_audit_events_buffered';

/** Bounds of the audit rows of unauthenticated traffic (docs/security.md "Bounds and browser rules"). */
export interface UnauthenticatedAuditLimits {
  /** Rows per minute and replica (`AUDIT_UNAUTHENTICATED_PER_MINUTE`, default 600); the rest become one summary row. */
  readonly perMinute: number;
  /** Days such rows are kept (`AUDIT_UNAUTHENTICATED_RETENTION_DAYS`, default 7); swept hourly. */
  readonly retentionDays: number;
}

const DEFAULT_UNAUTHENTICATED_LIMITS: UnauthenticatedAuditLimits = { perMinute: 600, retentionDays: 7 };

/** The durable path of the audit events. */
export interface AuditBuffer {
  /** Events held in memory while PostgreSQL cannot take them (`AUDIT_BUFFER_MAX_EVENTS`, default 50,000); past it new events are dropped and counted. */
  readonly maxEvents: number;
}

/** What {@link AuditLog} needs. */
export interface AuditLogDeps {
  readonly pool: Pool;
  readonly logger: Logger;
  readonly unauthenticated?: UnauthenticatedAuditLimits;
  readonly buffer?: AuditBuffer;
  /** Where {@link AUDIT_DROPPED_METRIC} and {@link AUDIT_BUFFERED_METRIC} go; none: not exported. */
  readonly registry?: Registry;
}

/**
 * The audit trail, written to PostgreSQL off the request path: events are
 * queued and inserted in batches every 200 ms (or at 500 events), so
 * auditing adds no database round trip to a tool call. `flush()` on shutdown.
 * Events without a principal (unauthenticated traffic) are rate-limited and
 * kept only `retentionDays` ({@link UnauthenticatedAuditLimits}); the ones
 * over the rate are written as one `audit.unauthenticated.suppressed` row
 * with `details.dropped`.
 *
 * A PostgreSQL outage loses nothing up to the buffer's bound: a
 * batch that fails stays queued, in order, and is written again after a wait
 * that doubles up to 5 s. Each event carries its own id (`source`
 * `mcp-gateway`, `source_id`), so a batch whose COMMIT landed although its
 * answer was lost is not written twice. Past `buffer.maxEvents` waiting
 * events, new ones are dropped, counted in {@link AUDIT_DROPPED_METRIC} and
 * written as one `audit.buffer.dropped` row (`details.dropped`, `from`, `to`)
 * once PostgreSQL takes writes again.
 */
export class AuditLog {
  private queue: StoredAuditEvent[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly sweeper: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private readonly budget: UnauthenticatedBudget;
  private readonly limits: UnauthenticatedAuditLimits;
  private readonly maxEvents: number;
  private readonly droppedCounter: { inc(value?: number): void } | undefined;
  /** Dropped past the bound since the last summary row: how many, first and last. */
  private overflow: { dropped: number; from: Date; to: Date } | undefined;
  /** While writes fail: when the next may be tried (epoch ms) and the current wait. */
  private failing: { retryAt: number; waitMs: number; since: number } | undefined;

  constructor(private readonly deps: AuditLogDeps) {
    this.limits = deps.unauthenticated ?? DEFAULT_UNAUTHENTICATED_LIMITS;
    this.maxEvents = deps.buffer?.maxEvents ?? DEFAULT_AUDIT_BUFFER_MAX_EVENTS;
    this.budget = new UnauthenticatedBudget(this.limits.perMinute);
    if (deps.registry !== undefined) {
      this.droppedCounter = counter(
        deps.registry,
        AUDIT_DROPPED_METRIC,
        'Audit events dropped because the buffer held AUDIT_BUFFER_MAX_EVENTS while PostgreSQL took no writes.',
        [],
      );
      registerGauge(deps.registry, AUDIT_BUFFERED_METRIC, 'Audit events waiting to be written.', () => this.buffered);
    }
    this.timer = setInterval(() => void this.tick(), FLUSH_INTERVAL_MS);
    this.timer.unref();
    this.sweeper = setInterval(() => void this.sweepUnauthenticated(), RETENTION_SWEEP_MS);
    this.sweeper.unref();
  }

  /** Events waiting to be written. */
  get buffered(): number {
    return this.queue.length;
  }

  /**
   * Queues an event (timestamped now); an unauthenticated one only within its
   * rate, any one only within the buffer's bound (else counted as dropped).
   */
  record(event: AuditEvent): void {
    if (event.principal === undefined && !this.budget.admit(Date.now())) return;
    const at = new Date();
    if (this.queue.length >= this.maxEvents) {
      this.overflow = { dropped: (this.overflow?.dropped ?? 0) + 1, from: this.overflow?.from ?? at, to: at };
      this.droppedCounter?.inc();
      return;
    }
    this.queue.push({ ...event, at, id: randomUUID() });
    if (this.queue.length >= MAX_BATCH && this.failing === undefined) void this.flush();
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

  /**
   * Writes every queued event (at once, whatever wait a failing PostgreSQL set).
   * @returns once written, or once a write failed (the events stay queued)
   */
  async flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write(true));
    return this.flushing;
  }

  /** The timer's write: skipped while a failing PostgreSQL's wait runs, and while a write is in progress. */
  private tick(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write(false));
    return this.flushing;
  }

  /** Stops the timers and writes what is left; what cannot be written is logged and counted as dropped. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.sweeper);
    await this.flush();
    if (this.queue.length > 0) {
      this.deps.logger.error({ lost: this.queue.length }, 'audit events not written at shutdown');
      this.droppedCounter?.inc(this.queue.length);
      this.queue = [];
    }
  }

  private takeSummaries(): void {
    const dropped = this.budget.takeDropped();
    if (dropped > 0) {
      this.queue.push({
        category: 'audit',
        action: 'audit.unauthenticated.suppressed',
        principal: undefined,
        outcome: 'suppressed',
        details: { dropped, perMinute: this.limits.perMinute },
        at: new Date(),
        id: randomUUID(),
      });
    }
    const overflow = this.overflow;
    if (overflow !== undefined) {
      this.overflow = undefined;
      // Goes in even past the bound: it is the one row that says the trail has a gap.
      this.queue.push({
        category: 'audit',
        action: 'audit.buffer.dropped',
        principal: undefined,
        outcome: 'dropped',
        details: {
          dropped: overflow.dropped,
          from: overflow.from.toISOString(),
          to: overflow.to.toISOString(),
          maxEvents: this.maxEvents,
        },
        at: new Date(),
        id: randomUUID(),
      });
    }
  }

  /** Writes the queue in batches; stops at the first failure, leaving the rest (that batch too) queued. */
  private async write(force = false): Promise<void> {
    if (!force && this.failing !== undefined && Date.now() < this.failing.retryAt) return;
    this.takeSummaries();
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, MAX_BATCH);
      try {
        await insertGatewayEvents(this.deps.pool, batch);
      } catch (err) {
        this.onFailure(err);
        return;
      }
      this.queue.splice(0, batch.length);
      if (this.failing !== undefined) {
        this.deps.logger.info(
          { afterMs: Date.now() - this.failing.since, buffered: this.queue.length },
          'audit writes work again; writing the buffered events',
        );
        this.failing = undefined;
      }
    }
  }

  private onFailure(err: unknown): void {
    const now = Date.now();
    if (this.failing === undefined) {
      // One line per outage, not one per batch: the events are kept and retried.
      this.deps.logger.warn(
        { err, buffered: this.queue.length, maxEvents: this.maxEvents },
        'audit write failed; events kept and retried',
      );
      this.failing = { since: now, waitMs: FLUSH_INTERVAL_MS, retryAt: now + FLUSH_INTERVAL_MS };
      return;
    }
    const waitMs = Math.min(this.failing.waitMs * 2, MAX_RETRY_MS);
    this.failing = { ...this.failing, waitMs, retryAt: now + waitMs };
  }
}
