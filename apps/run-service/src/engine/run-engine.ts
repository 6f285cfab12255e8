import { isTransientPgFailure, type Logger, type Pool } from '@dagu-mcp/runtime';
import { RunStatus } from '@dagu-mcp/contracts';
import type { RunConfig } from '../config/run-config';
import type { RunMetrics } from '../events/run-metrics';
import type { SecretSource } from '../store/profile-env';
import { runEventOf, type RunEventPublisher } from '../events/run-event-publisher';
import { readStreamTotals } from '../store/log-reader';
import { queueLimits } from '../config/queue-limits';
import { RunDispatcher } from './run-dispatcher';
import { lowDiskReason } from './disk-guard';
import { LaunchGate } from './launch-gate';
import { findRunByPk, finishAttempt, loadSteps, type InsertedRun } from '../store/run.repository';
import { forceEndRun, heartbeat } from '../store/run-ownership.repository';
import { parkAttempt } from '../store/checkpoint.repository';
import { rewindInputOf } from './approval-rewind';
import { finishedSteps, handBack } from './hand-back';
import { planAttempt } from './attempt-plan';
import { ChildRunner } from '../composition/child-runner';
import { subDagExecutor } from '../composition/sub-dag.executor';
import { registerBuiltinExecutors } from '../executors/builtin-executors';
import { StepExecutorRegistry } from '../executors/step-executor-registry';
import { foreachExecutor } from '../foreach/foreach.executor';
import { PgForeachRunner } from '../foreach/foreach-runner';
import type { StoredSpecReader } from '../composition/sub-dag-spec';
import { runAttempt } from './attempt-runner';
import type { ForeachRunner, SubDagRunner } from '../core/run-types';
import { formatParams } from '../core/params';
import { DIRECT_LAUNCHER, type StepLauncher } from '../core/step-launch';
import { parseDagSpecOffThread } from '../core/dag-spec-threads';
import { retryWhileUnavailable } from '../store/outage-retry';

/**
 * The run engine of one replica (docs/architecture.md "the run engine's running
 * processes are owned by one replica"). It executes the runs this replica
 * started, claimed from the queue or retried; records each attempt's end in
 * PostgreSQL before it publishes the run event; stamps heartbeats of its runs
 * (and picks up stop requests made on other replicas); and on shutdown lets
 * running runs finish for `RUN_STOP_GRACE_MS`, then kills them and hands
 * them back to the queue (`engine/hand-back.ts`): finished steps kept, the
 * rest runs again in a new attempt on the replica that claims the run.
 * Child runs that execute here for a `dag.run` step are not handed back:
 * they end failed with "run-service replica stopped" and the parent's step
 * runs again with a new child. A child that does not execute here (parked at
 * a checkpoint) or is handed back itself is left alone; the parent's next
 * attempt adopts it (`composition/child-runner.ts`).
 */

/** What the engine is built from. */
export interface RunEngineDeps {
  pool: Pool;
  config: RunConfig;
  logger: Logger;
  /** This replica's id (the `owner` of its runs). */
  replica: string;
  publisher: RunEventPublisher;
  /** The environment steps inherit (the service process's, read once at start). */
  processEnv: Readonly<Record<string, string>>;
  /** Starts the DAG author's code as the step user; default: as this process (tests, developer machines). */
  launcher?: StepLauncher;
  /** Reads a stored DAG's YAML for `dag.run` of a stored DAG; absent = local sub-DAGs only. */
  readStoredSpec?: StoredSpecReader;
  /** Run and step metrics; absent in tests that need none. */
  metrics?: RunMetrics;
  /** The key ring of secret profile values (Dagu spec 022b); absent in tests that use no profile. */
  secrets?: SecretSource;
}

interface ActiveRun {
  stop: AbortController;
  kill: AbortController;
  done: Promise<void>;
  /** Killed by shutdown → handed back (root runs) rather than failed (child runs). */
  handBack: boolean;
}

/**
 * The executor of every step kind: the built-in ones, then composition's
 * (sub-DAG) and foreach's. Checked complete here, when the engine is built:
 * a step kind without an executor fails the service's start, never a run.
 * @throws Error naming the step kinds without an executor
 */
export function buildExecutorRegistry(children: SubDagRunner, foreach: ForeachRunner): StepExecutorRegistry {
  const registry = registerBuiltinExecutors(new StepExecutorRegistry())
    .register('sub_dag', subDagExecutor(children))
    .register('foreach', foreachExecutor(foreach));
  registry.assertComplete();
  return registry;
}

/** Executes runs in this replica. */
export class RunEngine {
  private readonly active = new Map<number, ActiveRun>();
  private readonly dispatcher: RunDispatcher;
  private readonly children: ChildRunner;
  private readonly foreach: PgForeachRunner;
  private readonly executors: StepExecutorRegistry;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private closing = false;
  /** Fresh runs of `run.start` wait here while other starts are accepted (`launch-gate.ts`). */
  readonly launchGate: LaunchGate;

  constructor(private readonly deps: RunEngineDeps) {
    this.launchGate = new LaunchGate(deps.config.launchHoldMs, deps.config.launchQuietMs);
    this.foreach = new PgForeachRunner({
      pool: deps.pool,
      logger: deps.logger,
      outageMaxMs: deps.config.dbOutageMaxMs,
    });
    this.children = new ChildRunner({
      pool: deps.pool,
      logger: deps.logger,
      replica: deps.replica,
      publisher: deps.publisher,
      execute: (pk, parent) => this.executeChild(pk, parent),
      outageMaxMs: deps.config.dbOutageMaxMs,
      leavesOnShutdown: (parentPk, childPk) =>
        this.active.get(parentPk)?.handBack === true && this.active.get(childPk)?.handBack !== false,
      ...(deps.readStoredSpec !== undefined ? { readStored: deps.readStoredSpec } : {}),
    });
    this.executors = buildExecutorRegistry(this.children, this.foreach);
    this.dispatcher = new RunDispatcher(deps.pool, {
      owner: deps.replica,
      queues: queueLimits(deps.config.queues, deps.config.queueConcurrency),
      pollMs: deps.config.queuePollMs,
      logger: deps.logger,
      onClaimed: async (runs) => {
        for (const run of runs) {
          await this.deps.publisher.publish(runEventOf(run, RunStatus.running));
          this.launch(run.pk);
        }
      },
      // Queued runs stay queued while the disk is nearly full (disk-guard.ts).
      mayClaim: () => lowDiskReason(deps.config.workDir, deps.config.minFreeBytes),
    });
  }

  /** Starts the queue dispatcher and the heartbeat. */
  start(): void {
    this.dispatcher.start();
    this.heartbeatTimer = setInterval(() => {
      this.beating ??= this.beat().finally(() => (this.beating = undefined));
    }, this.deps.config.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  /** Asks the dispatcher to look at the queue now. */
  pokeQueue(): void {
    this.dispatcher.poke();
  }

  /** True when run `pk` executes in this replica now. */
  runsHere(pk: number): boolean {
    return this.active.has(pk);
  }

  /** Runs in this replica now. */
  get activeCount(): number {
    return this.active.size;
  }

  /**
   * Executes the current attempt of run `pk` in the background. The run row
   * must already be `running` and owned by this replica. `fresh`: the rows
   * `insertRun` just committed for it (a run `run.start` created); the
   * attempt is planned from them instead of reading them back, and it waits
   * at the launch gate while other starts are accepted. The run is
   * this replica's from this call on, held or not: heartbeats stamp it, and a
   * stop or a shutdown reaches it.
   */
  launch(pk: number, fresh?: InsertedRun): void {
    if (this.active.has(pk)) return;
    const stop = new AbortController();
    const kill = new AbortController();
    if (this.closing) kill.abort();
    const entry: ActiveRun = { stop, kill, done: Promise.resolve(), handBack: true };
    const opened = fresh === undefined ? Promise.resolve() : this.launchGate.whenOpen();
    entry.done = opened
      .then(() => this.execute(pk, entry, fresh))
      .finally(() => {
        this.active.delete(pk);
        this.dispatcher.poke();
      });
    this.active.set(pk, entry);
  }

  /**
   * Executes child run `pk` (running, owned here) for a parent step and
   * resolves when its attempt ended or parked. A stop of the parent
   * (`parent` aborts) stops the child; heartbeats, stop and shutdown treat
   * it like any run of this replica.
   */
  executeChild(pk: number, parent: AbortSignal): Promise<void> {
    const stop = new AbortController();
    const kill = new AbortController();
    if (this.closing) kill.abort();
    const onParentAbort = (): void => stop.abort();
    parent.addEventListener('abort', onParentAbort, { once: true });
    if (parent.aborted) stop.abort();
    const entry: ActiveRun = { stop, kill, done: Promise.resolve(), handBack: false };
    entry.done = this.execute(pk, entry).finally(() => {
      this.active.delete(pk);
      parent.removeEventListener('abort', onParentAbort);
    });
    this.active.set(pk, entry);
    return entry.done;
  }

  /** Aborts run `pk` when it runs here; resolves when it ended. @returns false when it does not run here. */
  stopLocal(pk: number): Promise<void> | false {
    const entry = this.active.get(pk);
    if (entry === undefined) return false;
    entry.stop.abort();
    return entry.done;
  }

  /**
   * Graceful shutdown: no new runs; running ones get `stopGraceMs`, then are
   * killed and handed back. Heartbeats go on until every run ended here, so
   * no other replica's recovery sweep takes a run for orphaned meanwhile.
   */
  async shutdown(): Promise<void> {
    this.closing = true;
    // Runs held at the launch gate go now: like every run here, they get the grace period, then are handed back.
    this.launchGate.releaseNow();
    await this.dispatcher.stop();
    const all = (): Promise<void> =>
      Promise.all([...this.active.values()].map((entry) => entry.done)).then(() => undefined);
    let graceTimer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>(
      (resolve) => (graceTimer = setTimeout(() => resolve('grace'), this.deps.config.stopGraceMs)),
    );
    const first = await Promise.race([all().then(() => 'done' as const), graceOver]);
    if (graceTimer !== undefined) clearTimeout(graceTimer);
    if (first === 'grace') {
      this.deps.logger.warn({ runs: this.active.size }, 'stop grace over: killing running runs');
      for (const entry of this.active.values()) entry.kill.abort();
      await all();
    }
    if (this.heartbeatTimer !== undefined) clearInterval(this.heartbeatTimer);
    await this.beating;
  }

  private async execute(pk: number, entry: ActiveRun, fresh?: InsertedRun): Promise<void> {
    let handedBack = false;
    try {
      handedBack = await this.executeAttempt(pk, entry, fresh);
    } finally {
      // Children left alone at a shutdown kill wait for the next attempt, if the run was handed back; else they end.
      await this.children.settleLeft(pk, handedBack);
    }
  }

  /**
   * Runs `operation` (an engine read or write of run `pk`) through a
   * PostgreSQL outage: retried while PostgreSQL is unavailable, up to
   * `RUN_DB_OUTAGE_MAX_MS` (`store/outage-retry.ts`).
   */
  private throughOutage<T>(pk: number, what: string, operation: () => Promise<T>): Promise<T> {
    return retryWhileUnavailable(operation, {
      maxMs: this.deps.config.dbOutageMaxMs,
      logger: this.deps.logger,
      what,
      fields: { runPk: pk },
    });
  }

  /** @returns true when the run was handed back. */
  private async executeAttempt(pk: number, entry: ActiveRun, fresh?: InsertedRun): Promise<boolean> {
    const { pool, logger } = this.deps;
    try {
      const run = fresh?.run ?? (await this.throughOutage(pk, 'run start', () => findRunByPk(pool, pk)));
      if (run === undefined || run.status !== RunStatus.running) return false;
      // A fresh run's rows are the ones just inserted, and its scheduler log is empty.
      const [rows, schedulerLines] =
        fresh !== undefined
          ? [fresh.steps, 0]
          : await this.throughOutage(pk, 'run start', async () => {
              const steps = await loadSteps(pool, pk, run.attempt_no);
              const totals = await readStreamTotals(pool, [run.scheduler_log]);
              return [steps, totals.get(run.scheduler_log) ?? 0] as const;
            });
      // A large snapshot is parsed on a thread first; planAttempt then finds it in the memo.
      await parseDagSpecOffThread(run.spec, run.dag_name);
      const planned = planAttempt(run, rows, schedulerLines);
      const plan = {
        ...planned,
        carriedVars: await this.throughOutage(pk, 'run start', () =>
          rewindInputOf(pool, { pk, attemptNo: run.attempt_no }, planned.dag),
        ),
      };
      if (run.stop_requested_at !== null) entry.stop.abort();
      // Launched while shutting down (a resume, a retry): hand it back before anything runs.
      if (
        entry.handBack &&
        entry.kill.signal.aborted &&
        !entry.stop.signal.aborted &&
        (await this.throughOutage(pk, 'hand-back', () => handBack(this.deps, run, plan, finishedSteps(plan))))
      )
        return true;
      // What had finished when the kill came (this listener fires before the attempt's own).
      let finishedAtKill: ReturnType<typeof finishedSteps> | undefined;
      const onKill = (): void => void (finishedAtKill = finishedSteps(plan));
      entry.kill.signal.addEventListener('abort', onKill, { once: true });
      const outcome = await runAttempt(
        {
          pool,
          config: this.deps.config,
          logger,
          processEnv: this.deps.processEnv,
          launcher: this.deps.launcher ?? DIRECT_LAUNCHER,
          executors: this.executors,
          ...(this.deps.metrics !== undefined ? { metrics: this.deps.metrics } : {}),
          ...(this.deps.secrets !== undefined ? { secrets: this.deps.secrets } : {}),
          stepEvents: (events) => this.deps.publisher.publishSteps?.(events),
        },
        plan,
        { stop: entry.stop.signal, kill: entry.kill.signal },
      ).finally(() => entry.kill.signal.removeEventListener('abort', onKill));
      // Only a run with steps left is handed back: once every step had finished (the kill hit its handlers or
      // the final bookkeeping) running it again would repeat its handlers, so it ends here as it stands.
      const stepsLeft = finishedAtKill !== undefined && finishedAtKill.length < plan.steps.length;
      if (
        entry.handBack &&
        stepsLeft &&
        finishedAtKill !== undefined &&
        !entry.stop.signal.aborted &&
        outcome.status !== RunStatus.waiting
      ) {
        const finished = finishedAtKill;
        if (await this.throughOutage(pk, 'hand-back', () => handBack(this.deps, run, plan, finished, outcome)))
          return true;
      }
      if (outcome.status === RunStatus.waiting) {
        const parked = await this.throughOutage(pk, 'run park', () =>
          parkAttempt(
            pool,
            { pk, attemptNo: run.attempt_no },
            {
              params: formatParams(outcome.params),
              resolvedParams: outcome.params,
              paramsEvaluated: outcome.paramsEvaluated,
            },
          ),
        );
        if (parked)
          await this.deps.publisher.publish(
            runEventOf(
              { dagName: run.dag_name, dagRunId: run.dag_run_id, attemptId: run.attempt_id },
              RunStatus.waiting,
            ),
          );
        return false;
      }
      const finished = await this.throughOutage(pk, 'run end', () =>
        finishAttempt(
          pool,
          { pk, attemptNo: run.attempt_no },
          {
            status: outcome.status,
            error: outcome.error,
            params: formatParams(outcome.params),
            resolvedParams: outcome.params,
            paramsEvaluated: outcome.paramsEvaluated,
          },
        ),
      );
      if (finished === undefined) return false;
      await this.deps.publisher.publish(
        runEventOf(
          { dagName: run.dag_name, dagRunId: run.dag_run_id, attemptId: run.attempt_id },
          outcome.status,
          finished,
        ),
      );
      return false;
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      const message = isTransientPgFailure(error)
        ? `PostgreSQL was unavailable for more than ${Math.round(this.deps.config.dbOutageMaxMs / 1000)}s (RUN_DB_OUTAGE_MAX_MS): ${detail}`
        : `internal engine error: ${detail}`;
      logger.error({ err: message, runPk: pk }, 'run execution failed');
      await this.failRun(pk, message);
    }
    return false;
  }

  private async failRun(pk: number, message: string): Promise<void> {
    try {
      const ended = await this.throughOutage(pk, 'run failure', () =>
        forceEndRun(this.deps.pool, pk, RunStatus.failed, message),
      );
      if (ended !== undefined) {
        await this.deps.publisher.publish(
          runEventOf(
            { dagName: ended.dag_name, dagRunId: ended.dag_run_id, attemptId: ended.attempt_id },
            RunStatus.failed,
          ),
        );
      }
    } catch (error) {
      this.deps.logger.error(
        { err: error instanceof Error ? error.message : String(error), runPk: pk },
        'could not record a failed run',
      );
    }
  }

  private async beat(): Promise<void> {
    try {
      const report = await heartbeat(this.deps.pool, this.deps.replica, [...this.active.keys()]);
      for (const pk of report.stopRequested) this.active.get(pk)?.stop.abort();
      for (const pk of report.lost) {
        this.deps.logger.warn({ runPk: pk }, 'run ended elsewhere: killing its processes');
        this.active.get(pk)?.stop.abort();
      }
    } catch (error) {
      this.deps.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'heartbeat failed');
    }
  }
}
