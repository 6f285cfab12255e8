import { ErrorCodeSchema } from '@dagu-mcp/contracts';
import { counter, durationHistogram, METRIC_NAMES, type Logger, type Pool, type Registry } from '@dagu-mcp/runtime';
import { insertToolCalls, pruneToolCalls, type ToolCallRecord } from './tool-call.repository';

/** Options of {@link UsageRecorder}. */
export interface UsageRecorderOptions {
  readonly pool: Pool;
  readonly registry: Registry;
  readonly logger: Logger;
  /** How often buffered calls are written, ms (default 1000). */
  readonly flushMs?: number;
  /** A batch is written at once when it reaches this many calls (default 500). */
  readonly batchSize?: number;
  /** Most calls kept while PostgreSQL is unreachable; older ones are dropped (and counted) first (default 20 000). */
  readonly maxBuffered?: number;
  /** Distinct `workspace`/`agent`/`tool` label sets before new ones are folded into `_other` (default 2000). */
  readonly maxSeries?: number;
  /** Calls older than this many days are deleted (`AGENT_USAGE_RETENTION_DAYS`; default 93, the longest usage window). */
  readonly retentionDays?: number;
  /** How often the retention sweep runs, ms (default 1 h; the first runs one interval after start). */
  readonly pruneEveryMs?: number;
}

const OTHER = '_other';

/**
 * Usage of agent endpoints. Every `tools/call` is counted
 * in Prometheus at once (`dagu_agent_tool_calls_total`,
 * `dagu_agent_tool_call_duration_seconds`; labels bounded: at most
 * `maxSeries` workspace/agent/tool sets, then `_other`; `outcome` is `ok` or
 * a contract error code) and kept for `GET …/usage` in the gateway's own
 * `agent_tool_calls` table: buffered in memory and written in batches every
 * `flushMs` (one multi-row INSERT), so the call path never waits for
 * PostgreSQL. Every replica writes its own calls; the table is the sum
 * (docs/decisions.md "Agent usage").
 */
export class UsageRecorder {
  private buffer: ToolCallRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly series = new Set<string>();
  private readonly calls;
  private readonly duration;
  private dropped = 0;

  constructor(private readonly options: UsageRecorderOptions) {
    this.calls = counter(
      options.registry,
      METRIC_NAMES.agentToolCalls,
      'tools/call requests on published agents endpoints, by workspace, agent, tool and outcome.',
      ['workspace', 'agent', 'tool', 'outcome'],
    );
    this.duration = durationHistogram(
      options.registry,
      METRIC_NAMES.agentToolCallDuration,
      'Wall time of tools/call requests on published agents endpoints.',
      ['workspace', 'agent', 'tool'],
    );
  }

  /** Starts the periodic flush. */
  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.flushMs ?? 1000);
    this.timer.unref();
    this.pruneTimer = setInterval(() => void this.prune(), this.options.pruneEveryMs ?? 3_600_000);
    this.pruneTimer.unref();
  }

  /**
   * Deletes calls past the retention (`retentionDays`); never throws (a failure is logged and the
   * next sweep tries again). Resolves with the rows deleted.
   */
  async prune(now = new Date()): Promise<number> {
    const days = this.options.retentionDays ?? 93;
    try {
      const deleted = await pruneToolCalls(this.options.pool, new Date(now.getTime() - days * 86_400_000));
      if (deleted > 0) this.options.logger.info({ deleted, retentionDays: days }, 'agent usage: old calls deleted');
      return deleted;
    } catch (err) {
      this.options.logger.warn({ err }, 'agent usage retention sweep failed');
      return 0;
    }
  }

  /** Counts one call now and buffers it for the table (never throws, never waits). */
  record(call: ToolCallRecord): void {
    const labels = this.labelsOf(call);
    const outcome = !call.isError
      ? 'ok'
      : call.errorCode === 'upstream_error'
        ? 'upstream_error'
        : (ErrorCodeSchema.safeParse(call.errorCode).data ?? 'error');
    this.calls.inc({ ...labels, outcome });
    this.duration.observe(labels, call.durationMs / 1000);
    this.buffer.push(call);
    const max = this.options.maxBuffered ?? 20_000;
    if (this.buffer.length > max) {
      this.dropped += this.buffer.length - max;
      this.buffer = this.buffer.slice(this.buffer.length - max);
    }
    if (this.buffer.length >= (this.options.batchSize ?? 500)) void this.flush();
  }

  /** Writes what is buffered (one write at a time); a failed write keeps the calls for the next one. */
  flush(): Promise<void> {
    if (this.flushing !== undefined) return this.flushing;
    if (this.buffer.length === 0) return Promise.resolve();
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = insertToolCalls(this.options.pool, batch)
      .catch((err: unknown) => {
        this.buffer = [...batch, ...this.buffer];
        this.options.logger.warn({ err, calls: batch.length }, 'agent usage write failed; kept for the next flush');
      })
      .finally(() => {
        this.flushing = undefined;
        if (this.dropped > 0) {
          this.options.logger.warn({ dropped: this.dropped }, 'agent usage buffer full: oldest calls dropped');
          this.dropped = 0;
        }
      });
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    if (this.pruneTimer !== undefined) clearInterval(this.pruneTimer);
    this.timer = undefined;
    this.pruneTimer = undefined;
    await this.flush();
    await this.flush();
  }

  private labelsOf(call: ToolCallRecord): { workspace: string; agent: string; tool: string } {
    const key = `${call.workspace}\u0000${call.agentSlug}\u0000${call.tool}`;
    if (!this.series.has(key)) {
      if (this.series.size >= (this.options.maxSeries ?? 2000)) return { workspace: OTHER, agent: OTHER, tool: OTHER };
      this.series.add(key);
    }
    return { workspace: call.workspace, agent: call.agentSlug, tool: call.tool };
  }
}
