import { DaguError, dagOps, type Principal } from '@dagu-mcp/contracts';
import { createHandlerContext, type BusClient } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import type { RunDeps } from '../runs/run-deps';
import { startRun } from '../runs/run-start';
import { compileSchedule, isTick, scheduledRunId } from './cron-ticks';
import type { ScheduleEntry } from './run-scheduler';

/**
 * Who scheduled runs are started as (a system principal; it never leaves
 * run-service but in `dag.schedules` calls). `operator`: exactly what it needs,
 * starting runs of stored DAGs (dagu-model §9; `startRun` checks it).
 */
export const SCHEDULER_PRINCIPAL: Principal = Object.freeze({
  id: 'scheduler',
  subject: 'scheduler',
  role: 'operator',
  credentialType: 'none',
});

/** What scheduled starts are built from. */
export interface ScheduledStartDeps {
  readonly runDeps: RunDeps;
  readonly bus: BusClient;
  readonly timezone: string;
  readonly logger: Logger;
  /** Deadline of each dag-service call and of the run insert, ms. */
  readonly timeoutMs: number;
}

/** Lists every DAG with a schedule (the scheduler's `list`). */
export function listSchedules(deps: Pick<ScheduledStartDeps, 'bus' | 'timeoutMs'>): () => Promise<ScheduleEntry[]> {
  return async () =>
    (
      await deps.bus.call(
        'dag',
        dagOps,
        'dag.schedules',
        {},
        { principal: SCHEDULER_PRINCIPAL, timeoutMs: deps.timeoutMs },
      )
    ).schedules;
}

/**
 * The scheduler's `fire`: re-reads the DAG (`dag.schedules` with its YAML);
 * when it still exists, is not suspended and its schedule still has `tick`,
 * enqueues a run (status 5, so the DAG's queue and `max_active_runs` apply)
 * with the tick's run id (`<tick>-scheduled`) and the bus job id
 * `schedule:<dag>:<tick>`. Every replica fires every tick; the unique run id
 * lets one insert win — another replica gets the same run back (same job
 * id) or a `conflict`, which is the expected outcome and is ignored.
 */
export function createScheduledStart(deps: ScheduledStartDeps): (name: string, tick: Date) => Promise<void> {
  return async (name, tick) => {
    const reply = await deps.bus.call(
      'dag',
      dagOps,
      'dag.schedules',
      { names: [name], withSpec: true },
      { principal: SCHEDULER_PRINCIPAL, timeoutMs: deps.timeoutMs },
    );
    const entry = reply.schedules.find((candidate) => candidate.name === name);
    if (entry === undefined || entry.suspended || entry.spec === undefined) return;
    if (!isTick(compileSchedule(entry.schedule, deps.timezone), tick)) return;
    const { context, dispose } = createHandlerContext({
      principal: SCHEDULER_PRINCIPAL,
      deadline: Date.now() + deps.timeoutMs,
      op: 'run.start',
      jobId: `schedule:${name}:${tick.toISOString()}`,
      traceContext: {},
      logger: deps.logger,
    });
    try {
      const run = await startRun(
        deps.runDeps,
        { dagName: name, spec: entry.spec, inline: false, enqueue: true, dagRunId: scheduledRunId(tick) },
        context,
      );
      deps.logger.debug({ dag: name, dagRunId: run.dagRunId, tick: tick.toISOString() }, 'scheduled run enqueued');
    } catch (error) {
      if (error instanceof DaguError && error.code === 'conflict') return; // another replica started this tick
      throw error;
    } finally {
      dispose();
    }
  };
}
