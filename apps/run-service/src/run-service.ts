import { runOps, type RunOps } from '@dagu-mcp/contracts';
import { createSecretSource, isLoopbackDatabase, type ServiceDefinition } from '@dagu-mcp/service-kit';
import type { RunConfig } from './config/run-config';
import { RUN_MIGRATIONS } from './store/migrations';
import { RunEngine } from './engine/run-engine';
import { RunControlChannel } from './events/run-control';
import { RedisRunEventPublisher } from './events/run-event-publisher';
import { RootTaggingPublisher } from './events/root-tagging-publisher';
import { RunMetrics } from './events/run-metrics';
import { DagMoveConsumer } from './events/dag-move-consumer';
import { createRunHandlers } from './handlers/run-handlers';
import { createStoredDagSpecs } from './runs/stored-dag-specs';
import { RecoverySweeper } from './recovery/recovery-sweeper';
import { RetentionSweeper } from './retention/retention-sweeper';
import { startScheduler } from './schedule/scheduler-setup';
import type { StepLauncher } from './core/step-launch';
import { WorkbookReader } from './workbook/workbook-reader';
import type { LeftoverReport } from './process/step-group-registry';

/** What run-service is built from besides the shared service deps. */
export interface RunServiceOptions {
  /** Engine settings (`config/run-config.ts`). */
  runConfig: RunConfig;
  /** The environment steps inherit (the process's, read once in `main.ts`). */
  processEnv: Readonly<Record<string, string>>;
  /** Starts the DAG author's code as the step user (`RUN_STEP_USER`, `process/step-launcher.ts`); default: as this process. */
  launcher?: StepLauncher;
  /** `execArgv` of workbook-parsing worker threads (tests running TypeScript sources); default the process's. */
  workbookWorkerExecArgv?: readonly string[];
  /** What the start did about step process groups a dead run-service of this host left (logged). */
  leftovers?: LeftoverReport;
}

/**
 * run-service: DAG-runs — the engine (child processes), the queues, the cron
 * scheduler (schedule/), attempts, step states, logs. The engine, its Redis connections (run events,
 * stop requests) and its timers are built with the handlers; `onStop` (after
 * the bus worker stopped taking jobs, before the pool closes) shuts the
 * engine down: running runs get `RUN_STOP_GRACE_MS` to finish, then their
 * steps are killed and the runs are handed back to the queue (finished steps
 * kept; `engine/hand-back.ts`), where another replica's dispatcher — or
 * this one's after a restart — claims them and runs the rest as a new
 * attempt. Queued runs stay queued for other replicas.
 */
export function createRunService(options: RunServiceOptions): ServiceDefinition<RunOps> {
  let shutdown: (() => Promise<void>) | undefined;
  return {
    service: 'run',
    catalog: runOps,
    migrations: RUN_MIGRATIONS,
    createHandlers: ({ pool, reads, logger, config, replica, metrics }) => {
      const log = logger.child({ module: 'run-engine' });
      if (options.launcher?.identity === undefined) {
        log.warn(
          'RUN_STEP_USER unset: steps run as run-service itself and can read its environment and files ' +
            '(developer machines only; docs/security.md)',
        );
      } else {
        log.info({ stepUser: options.launcher.identity.name }, 'steps run as the step user');
      }
      // A warning only when something was left running: a clean stop leaves an empty record behind too.
      if (options.leftovers !== undefined && options.leftovers.killed.length > 0)
        log.warn(
          { files: options.leftovers.files, killed: options.leftovers.killed },
          'killed the step process groups a stopped run-service of this host left behind',
        );
      else if (options.leftovers !== undefined && options.leftovers.files > 0)
        log.info(
          { files: options.leftovers.files },
          'step-group records of a stopped run-service: nothing left running',
        );
      const publisher = new RootTaggingPublisher(
        new RedisRunEventPublisher(config.REDIS_URL, config.BUS_PREFIX, log),
        pool,
        log,
      );
      const storedSpecs = createStoredDagSpecs({
        redisUrl: config.REDIS_URL,
        prefix: config.BUS_PREFIX,
        replica,
        cacheMs: options.runConfig.specCacheMs,
        logger: log,
      });
      const secrets = createSecretSource({
        keyRing: options.runConfig.encryptionKey,
        loopback: isLoopbackDatabase(config.DATABASE_URL),
        logger: log,
        secrets: 'profile secrets',
        unavailable: 'Secret profile values are unavailable on run-service',
      });
      const runMetrics = new RunMetrics(metrics, pool, options.runConfig.metricsDagLabelsMax);
      const engine = new RunEngine({
        pool,
        config: options.runConfig,
        logger: log,
        replica,
        publisher,
        processEnv: options.processEnv,
        ...(options.launcher !== undefined ? { launcher: options.launcher } : {}),
        readStoredSpec: (name) => storedSpecs.read(name),
        metrics: runMetrics,
        secrets,
      });
      const control = new RunControlChannel(
        config.REDIS_URL,
        config.BUS_PREFIX,
        (pk) => void engine.stopLocal(pk),
        log,
      );
      control
        .start()
        .catch((error: unknown) =>
          log.warn({ err: error instanceof Error ? error.message : String(error) }, 'run control subscribe failed'),
        );
      engine.start();
      const deps = {
        pool,
        reads,
        engine,
        publisher,
        requestRemoteStop: (pk: number) => control.requestStop(pk),
        replica,
        config: options.runConfig,
        logger: log,
        metrics: runMetrics,
        secrets,
        storedSpecs,
      };
      const moves = new DagMoveConsumer({ redisUrl: config.REDIS_URL, prefix: config.BUS_PREFIX, pool, logger: log });
      const scheduler = startScheduler(deps, { redisUrl: config.REDIS_URL, prefix: config.BUS_PREFIX });
      const recovery = new RecoverySweeper(deps, (pk) => engine.runsHere(pk));
      recovery.start();
      const retention = new RetentionSweeper({
        pool,
        logger: log,
        defaultDays: options.runConfig.histRetentionDays,
        sweepMs: options.runConfig.retentionSweepMs,
        workDir: options.runConfig.workDir,
      });
      retention.start();
      const workbooks = new WorkbookReader({
        limits: options.runConfig.workbook,
        workDir: options.runConfig.workDir,
        ...(options.workbookWorkerExecArgv !== undefined ? { workerExecArgv: options.workbookWorkerExecArgv } : {}),
      });
      shutdown = async () => {
        // The engine's stop grace starts at once: a scheduler check waiting on dag-service
        // (up to its 10 s call timeout) must not eat into the 25 s shutdown bound.
        await Promise.all([recovery.stop(), retention.stop(), scheduler.stop(), engine.shutdown(), moves.close()]);
        // A run launched meanwhile (a scheduled start, a resume) is handed back too.
        await engine.shutdown();
        await control.close();
        await publisher.close();
        await storedSpecs.close();
        await workbooks.close();
      };
      return createRunHandlers(deps, workbooks, secrets);
    },
    onStop: async () => {
      await shutdown?.();
    },
  };
}
