import { BusClient } from '@dagu-mcp/bus';
import type { RunDeps } from '../runs/run-deps';
import { RunScheduler } from './run-scheduler';
import { createScheduledStart, listSchedules } from './scheduled-start';

/** Where the scheduler's bus client connects. */
export interface SchedulerSetupOptions {
  readonly redisUrl: string;
  readonly prefix: string;
}

/** A running scheduler; `stop()` ends it and closes its bus client. */
export interface SchedulerHandle {
  stop(): Promise<void>;
}

/** Deadline of the scheduler's bus calls and run inserts, ms. */
const CALL_TIMEOUT_MS = 10_000;

/**
 * Starts this replica's cron scheduler (run-scheduler.ts) unless
 * `RUN_SCHEDULER=false`: a bus client of its own for `dag.schedules`, then
 * the scheduler once the client is connected (while Redis is down it waits;
 * ticks before that are skipped, like ticks while the system is down).
 */
export function startScheduler(deps: RunDeps, options: SchedulerSetupOptions): SchedulerHandle {
  const { config } = deps;
  if (!config.scheduler) return { stop: async () => undefined };
  const logger = deps.logger.child({ module: 'run-scheduler' });
  const bus = new BusClient({
    redisUrl: options.redisUrl,
    prefix: options.prefix,
    defaultTimeoutMs: CALL_TIMEOUT_MS,
    logger,
  });
  const start = createScheduledStart({
    runDeps: deps,
    bus,
    timezone: config.scheduleTimezone,
    logger,
    timeoutMs: CALL_TIMEOUT_MS,
  });
  const scheduler = new RunScheduler({
    list: listSchedules({ bus, timeoutMs: CALL_TIMEOUT_MS }),
    fire: async (name, tick) => {
      await start(name, tick);
      // Scheduler lag: how long after its cron tick the start was done (`dagu_scheduler_lag_seconds`).
      deps.metrics?.scheduled((Date.now() - tick.getTime()) / 1000);
    },
    timezone: config.scheduleTimezone,
    checkMs: config.scheduleCheckMs,
    refreshMs: config.scheduleRefreshMs,
    logger,
  });
  let stopped = false;
  const started = bus.start().then(
    () => {
      if (!stopped) scheduler.start();
    },
    (error: unknown) =>
      logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'scheduler bus client did not start',
      ),
  );
  return {
    async stop() {
      stopped = true;
      await scheduler.stop();
      await bus.close();
      await started;
    },
  };
}
