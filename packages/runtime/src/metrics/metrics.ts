import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** prom-client's registry type, for apps that add their own metrics without depending on prom-client. */
export type { Registry };

/**
 * Names of the metrics the apps export (docs/architecture.md "Deployment"). Dashboards
 * and alerts depend on them: rename only with a new name beside the old one.
 * Every series also carries the registry's default label `app`.
 */
export const METRIC_NAMES = {
  /** Gateway HTTP requests; labels `route`, `method`, `status`, `mcp_method`. */
  httpRequestDuration: 'dagu_http_request_duration_seconds',
  /** Gateway → service bus calls, until the reply or failure; labels `service`, `op`, `outcome`. */
  busCallDuration: 'dagu_bus_call_duration_seconds',
  /** Handler run time of a bus job in a service; labels `service`, `op`, `outcome`. */
  busJobDuration: 'dagu_bus_job_duration_seconds',
  /** Jobs in a service's queue, read at scrape time; labels `queue`, `state`. */
  busQueueJobs: 'dagu_bus_queue_jobs',
  /** DAG-run attempts started by run-service (a retry or a resume after a hand-back is another); label `dag`. */
  runsStarted: 'dagu_runs_started_total',
  /** DAG-runs ended (or parked waiting) by run-service; labels `dag`, `status` (dagu-model §1 labels). */
  runsFinished: 'dagu_runs_finished_total',
  /** Wall time of the attempt that ended a run, s; labels `dag`, `status`. */
  runDuration: 'dagu_run_duration_seconds',
  /** Wall time of a step from its start to its end, s; labels `dag`, `status`. */
  stepDuration: 'dagu_step_duration_seconds',
  /** DAG-runs now running, queued or waiting, all replicas, read at scrape time; labels `status`, `queue`. */
  runsActive: 'dagu_runs_active',
  /** Age of the oldest queued run per named queue, s, read at scrape time (0: none queued); label `queue`. */
  runQueueOldestAge: 'dagu_run_queue_oldest_age_seconds',
  /** How late a scheduled (cron) start was enqueued after its tick, s. */
  schedulerLag: 'dagu_scheduler_lag_seconds',
  /** Time a human task or approval waited for its decision, s; labels `kind`, `outcome`. */
  checkpointWait: 'dagu_checkpoint_wait_seconds',
  /** `tools/call`s on published agents' endpoints; labels `workspace`, `agent`, `tool`, `outcome` (`ok` or an error code). */
  agentToolCalls: 'dagu_agent_tool_calls_total',
  /** Wall time of a `tools/call` on an agent endpoint, s; labels `workspace`, `agent`, `tool`. */
  agentToolCallDuration: 'dagu_agent_tool_call_duration_seconds',
  /** Lag-tolerant reads of a service by the server that answered them; label `source` (`replica`, `primary`). */
  dbReads: 'dagu_db_reads_total',
} as const;

/** Histogram buckets of every duration metric, in seconds (5 ms … 30 s). */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** A rendered scrape: the Prometheus text exposition format and its content type. */
export interface MetricsPage {
  readonly contentType: string;
  readonly body: string;
}

/** An app's metric registry and how to render it for `GET /metrics`. */
export interface AppMetrics {
  readonly registry: Registry;
  render(): Promise<MetricsPage>;
}

/**
 * Creates an app's own registry (never prom-client's global one, so tests and
 * several apps in one process stay apart) with the default label `app` and,
 * unless `processMetrics` is false, the process metrics: CPU, resident memory,
 * heap, event-loop lag, GC, open handles (prom-client's default collectors).
 *
 * @param opts.app            app name, e.g. `mcp-gateway`, `dag-service`
 * @param opts.processMetrics collect process metrics (default `true`)
 */
export function createAppMetrics(opts: { app: string; processMetrics?: boolean }): AppMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ app: opts.app });
  if (opts.processMetrics !== false) collectDefaultMetrics({ register: registry });
  return {
    registry,
    render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
}

const OUTCOME_CODE = /^[a-z][a-z0-9_]{0,47}$/;

/**
 * The `outcome` label of a failed operation: the error's string `code` when it
 * is a lower-snake-case code (the contracts' error codes, e.g.
 * `resource_unavailable`), else `internal_error`. Bounded, so label
 * cardinality stays small whatever is thrown.
 */
export function outcomeOf(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code: unknown = error.code;
    if (typeof code === 'string' && OUTCOME_CODE.test(code)) return code;
  }
  return 'internal_error';
}

/**
 * The duration histogram `name` of `registry`, created on first use with `buckets` (seconds,
 * default {@link DURATION_BUCKETS_SECONDS}); later calls return the same one.
 *
 * @throws Error when `name` is registered as another kind of metric
 */
export function durationHistogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: readonly number[] = DURATION_BUCKETS_SECONDS,
): Histogram<L> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Histogram) return existing;
  if (existing !== undefined) throw new Error(`metric ${name} is registered but is not a histogram`);
  return new Histogram<L>({ name, help, labelNames, buckets: [...buckets], registers: [registry] });
}

/**
 * The counter `name` of `registry`, created on first use; later calls return the same one.
 *
 * @throws Error when `name` is registered as another kind of metric
 */
export function counter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Counter) return existing;
  if (existing !== undefined) throw new Error(`metric ${name} is registered but is not a counter`);
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
}

/**
 * Runs `fn` and reports how long it took, in seconds, with outcome `ok` or
 * the failure's `classify(error)`; the result or error passes through.
 */
export async function timeAsync<T>(
  fn: () => Promise<T>,
  report: (outcome: string, seconds: number) => void,
  classify: (error: unknown) => string = outcomeOf,
): Promise<T> {
  const started = process.hrtime.bigint();
  try {
    const result = await fn();
    report('ok', secondsSince(started));
    return result;
  } catch (error) {
    report(classify(error), secondsSince(started));
    throw error;
  }
}

/** Seconds since `started` (a `process.hrtime.bigint()` reading). */
export function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/**
 * Wraps a service's handler map so every handler's run is recorded in
 * {@link METRIC_NAMES.busJobDuration} by op and outcome. The map itself is
 * unchanged (a Proxy): same keys, same handlers, same results and errors.
 *
 * @param service the service's name, e.g. `dag`
 * @param handlers op name → `(payload, ctx) => Promise<reply>`
 */
export function instrumentHandlers<H extends object>(registry: Registry, service: string, handlers: H): H {
  const histogram = durationHistogram(
    registry,
    METRIC_NAMES.busJobDuration,
    'Handler run time of bus jobs in a service.',
    ['service', 'op', 'outcome'],
  );
  const wrapped = new Map<string, (...args: unknown[]) => Promise<unknown>>();
  return new Proxy(handlers, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || typeof value !== 'function') return value;
      let timed = wrapped.get(property);
      if (timed === undefined) {
        const op = property;
        timed = (...args: unknown[]) =>
          timeAsync(
            async (): Promise<unknown> => Reflect.apply(value, target, args),
            (outcome, seconds) => histogram.observe({ service, op, outcome }, seconds),
          );
        wrapped.set(property, timed);
      }
      return timed;
    },
  });
}

/** Reads a queue's job counts by state, e.g. BullMQ's `queue.getJobCounts('waiting', 'active', 'delayed')`. */
export type QueueCountsReader = () => Promise<Record<string, number>>;

const queueReaders = new WeakMap<Registry, Map<string, { read: QueueCountsReader; timeoutMs: number }>>();

/**
 * Exports `queue`'s job counts as {@link METRIC_NAMES.busQueueJobs}, read at
 * each scrape. A read that fails or takes longer than `timeoutMs` (default
 * 1000) leaves that queue's series out of the scrape rather than stale.
 */
export function registerQueueDepth(registry: Registry, queue: string, read: QueueCountsReader, timeoutMs = 1000): void {
  let readers = queueReaders.get(registry);
  if (readers === undefined) {
    const all = new Map<string, { read: QueueCountsReader; timeoutMs: number }>();
    readers = all;
    queueReaders.set(registry, all);
    new Gauge({
      name: METRIC_NAMES.busQueueJobs,
      help: 'Jobs in a bus queue by state, read at scrape time.',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        this.reset();
        const results = await Promise.allSettled(
          [...all].map(async ([name, reader]) => ({
            name,
            counts: await withTimeout(reader.read(), reader.timeoutMs),
          })),
        );
        for (const result of results) {
          if (result.status !== 'fulfilled') continue;
          for (const [state, count] of Object.entries(result.value.counts))
            this.set({ queue: result.value.name, state }, count);
        }
      },
    });
  }
  readers.set(queue, { read, timeoutMs });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Exports the labelled values `read()` resolves to as gauge `name`, read at each scrape (e.g.
 * runs by status from PostgreSQL). A read that fails or takes longer than `timeoutMs` (default
 * 1000) leaves the gauge's series out of that scrape rather than stale.
 *
 * @param read resolves to one `{labels, value}` per series
 */
export function registerLabelledGauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  read: () => Promise<ReadonlyArray<{ labels: Record<L, string>; value: number }>>,
  timeoutMs = 1000,
): void {
  new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const series of await withTimeout(read(), timeoutMs)) this.set(series.labels, series.value);
      } catch {
        // Left out of this scrape: an absent series is honest, a stale one is not.
      }
    },
  });
}

/** Exports `read()` as gauge `name` (no labels besides `app`), read at each scrape, e.g. open MCP sessions. */
export function registerGauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/**
 * Exports the running totals `read()` returns as counter `name`, one series per key under label
 * `label`, read at each scrape (e.g. `dagu_db_reads_total{source}` from a ReadRouter's `served`).
 * The totals must only grow.
 */
export function registerCounterTotals(
  registry: Registry,
  name: string,
  help: string,
  label: string,
  read: () => Readonly<Record<string, number>>,
): void {
  new Counter({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect() {
      this.reset();
      for (const [key, total] of Object.entries(read())) this.inc({ [label]: key }, total);
    },
  });
}
