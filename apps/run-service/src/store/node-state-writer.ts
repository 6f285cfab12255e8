import type { Logger, Pool } from '@dagu-mcp/runtime';
import type { NodeSpec, NodeState, NodeStateSink } from '../core/run-types';
import { retryWhileUnavailable } from './outage-retry';

/**
 * Write-behind persistence of node (step) states. `save` never waits: it
 * records the node's latest state and a background loop writes every changed
 * node in one UPDATE (`unnest` of arrays), in order, one statement at a time.
 * A node saved several times before the loop runs is written once, with its
 * latest state. Writes of one attempt start at most every `minIntervalMs`
 * (`RUN_STATE_WRITE_MS`, 20 ms by default): in a chain of short steps the
 * states of several steps go in one write, and PostgreSQL's work (a commit
 * each) does not take the CPU the next step's process needs.
 * The engine awaits {@link NodeStateWriter.flush} before it
 * writes and publishes a run-status change, so a run event never announces
 * step states that are not in PostgreSQL yet (docs/architecture.md, dagu-model §8).
 * This keeps step bookkeeping off the critical path of a step chain.
 *
 * While PostgreSQL is unavailable the loop keeps the rows
 * and writes them again (`store/outage-retry.ts`, up to `outageMaxMs`); a
 * state saved meanwhile replaces the kept one of its node. The buffer is one
 * row per node, so it is bounded by the attempt's node count; steps go on
 * running, and `flush` (so the run's end) waits until the states are in.
 */
export class NodeStateWriter implements NodeStateSink {
  private pending = new Map<number, ReturnType<typeof snapshotOf>>();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly runPk: number,
    private readonly attemptNo: number,
    private readonly logger?: Logger,
    /** How long a write is retried while PostgreSQL is unavailable (`RUN_DB_OUTAGE_MAX_MS`), in ms; default 10 min. */
    private readonly outageMaxMs = 600_000,
    /**
     * Told the rows of each committed write, in order (the console's live step events):
     * called after the UPDATE, so a listener never hears of a state PostgreSQL does not hold.
     * Synchronous and must not throw; no extra database round trip.
     */
    private readonly onWritten?: (rows: readonly WrittenStep[]) => void,
    /**
     * Least time between the starts of two writes, ms (`RUN_STATE_WRITE_MS`); default 0 (back to
     * back). A save after a quiet spell is written at once; saves within the interval wait and go
     * in one write. {@link flush} never waits for it.
     */
    private readonly minIntervalMs = 0,
  ) {}

  /** `performance.now()` when the last write started. */
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  /** While {@link flush} runs: writes go at once. */
  private flushing = 0;
  /** Ends the wait for the interval early (a flush came). */
  private wake: (() => void) | undefined;

  save(node: NodeSpec, state: NodeState): void {
    this.pending.set(node.seq, snapshotOf(node, state));
    if (this.loop === undefined) this.loop = this.drain().finally(() => (this.loop = undefined));
  }

  /** Resolves once every state saved so far is written (or failed to be written and was logged). */
  async flush(): Promise<void> {
    this.flushing++;
    this.wake?.();
    try {
      while (this.loop !== undefined || this.pending.size > 0) {
        if (this.loop !== undefined) await this.loop;
        else this.loop = this.drain().finally(() => (this.loop = undefined));
      }
    } finally {
      this.flushing--;
    }
  }

  /** Waits until `minIntervalMs` after the last write started, unless a flush is running or comes. */
  private spaced(): Promise<void> {
    const wait = this.lastWriteAt + this.minIntervalMs - performance.now();
    if (this.flushing > 0 || wait <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, wait);
      this.wake = done;
    });
  }

  private async drain(): Promise<void> {
    await Promise.resolve();
    while (this.pending.size > 0) {
      await this.spaced();
      this.lastWriteAt = performance.now();
      let rows = [...this.pending.values()];
      this.pending = new Map();
      try {
        await retryWhileUnavailable(() => this.write((rows = this.withNewer(rows))), {
          maxMs: this.outageMaxMs,
          what: 'step states',
          fields: { runPk: this.runPk },
          ...(this.logger !== undefined ? { logger: this.logger } : {}),
        });
        this.tell(rows);
      } catch (error) {
        this.logger?.error(
          { err: error instanceof Error ? error.message : String(error), runPk: this.runPk },
          'step state write failed',
        );
      }
    }
  }

  private tell(rows: ReadonlyArray<ReturnType<typeof snapshotOf>>): void {
    if (this.onWritten === undefined) return;
    try {
      this.onWritten(
        rows.map((row) => ({
          name: row.name,
          status: row.status,
          ...(row.startedAt !== null ? { startedAt: row.startedAt } : {}),
          ...(row.finishedAt !== null ? { finishedAt: row.finishedAt } : {}),
          ...(row.error !== null ? { error: row.error } : {}),
        })),
      );
    } catch (error) {
      this.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'step event not published');
    }
  }

  /** `rows` with each node's state replaced by one saved since they were taken (taken out of `pending`: newest wins). */
  private withNewer(rows: ReadonlyArray<ReturnType<typeof snapshotOf>>): Array<ReturnType<typeof snapshotOf>> {
    return rows.map((row) => {
      const newer = this.pending.get(row.seq);
      if (newer === undefined) return row;
      this.pending.delete(row.seq);
      return newer;
    });
  }

  private async write(rows: ReadonlyArray<ReturnType<typeof snapshotOf>>): Promise<void> {
    const column = <K extends keyof ReturnType<typeof snapshotOf>>(key: K) => rows.map((row) => row[key]);
    await this.pool.query(
      `UPDATE run_steps s SET status = v.status, error = v.error, started_at = v.started_at, finished_at = v.finished_at,
         retry_count = v.retry_count, exit_code = v.exit_code, allowed_failure = v.allowed_failure, outputs = v.outputs, checkpoint = v.checkpoint
       FROM unnest($3::int[], $4::smallint[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::int[], $9::int[], $10::boolean[], $11::jsonb[], $12::jsonb[])
         AS v(seq, status, error, started_at, finished_at, retry_count, exit_code, allowed_failure, outputs, checkpoint)
       WHERE s.run_pk = $1 AND s.attempt_no = $2 AND s.seq = v.seq`,
      [
        this.runPk,
        this.attemptNo,
        column('seq'),
        column('status'),
        column('error'),
        column('startedAt'),
        column('finishedAt'),
        column('retryCount'),
        column('exitCode'),
        column('allowedFailure'),
        column('outputs'),
        column('checkpoint'),
      ],
    );
  }
}

/** A step state as committed: what {@link NodeStateWriter}'s `onWritten` is told (ISO 8601 timestamps). */
export interface WrittenStep {
  name: string;
  status: number;
  startedAt?: string;
  finishedAt?: string;
  error?: string;
}

function snapshotOf(node: NodeSpec, state: NodeState) {
  return {
    seq: node.seq,
    name: node.name,
    status: state.status,
    error: state.error ?? null,
    startedAt: state.startedAt?.toISOString() ?? null,
    finishedAt: state.finishedAt?.toISOString() ?? null,
    retryCount: state.retryCount,
    exitCode: state.exitCode ?? null,
    allowedFailure: state.allowedFailure,
    outputs: JSON.stringify(state.outputs),
    checkpoint: state.checkpoint !== undefined ? JSON.stringify(state.checkpoint) : null,
  };
}
