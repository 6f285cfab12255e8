import type { Pool } from '@dagu-mcp/runtime';
import type { Logger } from '@dagu-mcp/runtime';
import type { Principal } from '@dagu-mcp/contracts';

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

/**
 * The audit trail, written to PostgreSQL off the request path: events are
 * queued and inserted in batches every 200 ms (or at 500 events), so
 * auditing adds no database round trip to a tool call. `flush()` on shutdown.
 */
export class AuditLog {
  private queue: Array<AuditEvent & { at: Date }> = [];
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: { pool: Pool; logger: Logger }) {
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  /** Queues an event (timestamped now). */
  record(event: AuditEvent): void {
    this.queue.push({ ...event, at: new Date() });
    if (this.queue.length >= MAX_BATCH) void this.flush();
  }

  /** Writes every queued event. */
  async flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
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
