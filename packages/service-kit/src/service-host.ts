import type { Server } from 'node:http';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  MUTATION_OUTCOME_DEFINITION,
  MUTATION_OUTCOME_OP,
  type OpCatalog,
  type ServiceName,
} from '@dagu-mcp/contracts';
import { isRedisStartWait, pingRedis, queueNameOf, ServiceWorker, type HandlerMap } from '@dagu-mcp/bus';
import {
  createAppMetrics,
  createPool,
  endpointOf,
  isPgStartWait,
  waitForDependency,
  instrumentHandlers,
  migrate,
  migrateWithAdmin,
  ReadRouter,
  METRIC_NAMES,
  registerCounterTotals,
  registerQueueDepth,
  runTeardown,
  startOpsServer,
  type Logger,
  type Migration,
  type Pool,
  type Registry,
} from '@dagu-mcp/runtime';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { ServiceConfig } from './service-config';
import { createMutationOutcomeHandler, withMutationRecords } from './mutation-records';
import { OutboxDrain } from './outbox-drain';
import { RedisWriteMarks } from './redis-write-marks';
import { withWriteMarks } from './write-marks';

/** Migrates the service's schema once, through `DATABASE_ADMIN_URL` when set (docs/security.md). */
async function migrateSchema<C extends OpCatalog>(
  def: ServiceDefinition<C>,
  config: ServiceConfig,
  pool: Pool,
  logger: Logger,
): Promise<void> {
  if (config.DATABASE_ADMIN_URL === undefined) await migrate(pool, config.DB_SCHEMA, def.migrations, logger);
  else
    await migrateWithAdmin({
      adminUrl: config.DATABASE_ADMIN_URL,
      databaseUrl: config.DATABASE_URL,
      schema: config.DB_SCHEMA,
      migrations: def.migrations,
      logger,
    });
}

/** What a service's handlers are built from. */
export interface ServiceDeps {
  readonly pool: Pool;
  /**
   * Lag-tolerant reads (`DATABASE_READ_URL`): `reads.read(ctx.principal.id, (db) => …)`
   * runs on the replica when it may, else on `pool`. Writes and transactions use `pool`.
   * The host always sets it; tests that build handlers without the host may leave it out.
   */
  readonly reads?: ReadRouter;
  readonly logger: Logger;
  readonly config: ServiceConfig;
  /** This replica's id (host name + random suffix), reported by `ping`. */
  readonly replica: string;
  /** The service's metric registry, served at the ops port's `/metrics`: a service adds its own metrics here. */
  readonly metrics: Registry;
}

/**
 * A service: its queue, op catalog, migrations and handler factory. The
 * host adds the `mutation.outcome` op and handler itself; the migrations must
 * include `MUTATION_LOG_MIGRATION` (its mutation record and audit outbox).
 */
export interface ServiceDefinition<C extends OpCatalog> {
  readonly service: ServiceName;
  readonly catalog: C;
  readonly migrations: readonly Migration[];
  readonly createHandlers: (deps: ServiceDeps) => HandlerMap<C>;
  /** Outbox actions another service acts on, by action: the queue each row of it also goes to (OutboxDrain `routes`). */
  readonly outboxRoutes?: Readonly<Record<string, string>>;
  /** Called after the worker stops taking jobs, before the pool closes (e.g. the engine hands back runs). */
  readonly onStop?: () => Promise<void>;
}

/** A started service. `stop()` is the graceful shutdown of CONTRIBUTING §13. */
export interface RunningService {
  readonly opsPort: number;
  readonly replica: string;
  stop(): Promise<void>;
}

/**
 * Starts a service: pg pool, migrations of its own schema (safe with several
 * replicas, see `migrate`), the bus worker and the ops server whose `/readyz`
 * reports Redis, PostgreSQL and migrations and whose `/metrics` has the job
 * durations by op and outcome, the queue depth and the process metrics.
 *
 * PostgreSQL and Redis are waited for first (`DEPENDENCY_WAIT_MS`, default 60 s,
 * retried with backoff) while the ops server already answers
 * `/readyz` 503; migrations that fail because PostgreSQL went away are retried too.
 *
 * @throws when PostgreSQL or Redis do not answer within `DEPENDENCY_WAIT_MS`, or a
 *   migration fails for another reason (the start stops; the ops server is closed)
 */
export async function startService<C extends OpCatalog>(
  def: ServiceDefinition<C>,
  config: ServiceConfig,
  logger: Logger,
): Promise<RunningService> {
  const replica = `${hostname()}-${randomBytes(3).toString('hex')}`;
  // The host answers `mutation.outcome` for every service, from the mutation record.
  const catalog = { ...def.catalog, [MUTATION_OUTCOME_OP]: MUTATION_OUTCOME_DEFINITION };
  const pool = createPool({
    url: config.DATABASE_URL,
    schema: config.DB_SCHEMA,
    max: config.DB_POOL_SIZE,
    preparedStatements: config.DB_PREPARED_STATEMENTS,
    logger,
  });
  const marksRedis =
    config.DATABASE_READ_URL === undefined
      ? undefined
      : new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  marksRedis?.on('error', (err: Error) => logger.debug({ err: err.message }, 'write marks redis error'));
  const reads = new ReadRouter({
    primary: pool,
    replica:
      config.DATABASE_READ_URL === undefined
        ? undefined
        : createPool({
            url: config.DATABASE_READ_URL,
            schema: config.DB_SCHEMA,
            max: config.DB_POOL_SIZE,
            preparedStatements: config.DB_PREPARED_STATEMENTS,
            connectTimeoutMs: 1000,
            logger: logger.child({ db: 'replica' }),
          }),
    marks: marksRedis === undefined ? undefined : new RedisWriteMarks(marksRedis, config.BUS_PREFIX),
    maxLagMs: config.DB_READ_MAX_LAG_MS,
    checkMs: config.DB_READ_CHECK_MS,
    logger,
  });
  // The ops server answers first: /healthz 200, /readyz 503 while PostgreSQL and Redis are waited for (docs/decisions.md "A start waits for PostgreSQL and Redis").
  let migrated = false;
  let worker: ServiceWorker<typeof catalog> | undefined;
  const metrics = createAppMetrics({ app: `${def.service}-service` });
  const ops: Server = await startOpsServer({
    port: config.OPS_PORT,
    host: config.OPS_HOST,
    checks: {
      redis: () => worker?.isReady() ?? false,
      postgres: async () => migrated && (await pool.query('SELECT 1')).rowCount === 1,
      migrations: () => migrated,
    },
    metrics: () => metrics.render(),
  });
  try {
    await waitForDependency({
      dependency: 'PostgreSQL',
      target: endpointOf(config.DATABASE_ADMIN_URL ?? config.DATABASE_URL, 5432),
      attempt: () => migrateSchema(def, config, pool, logger),
      isUnavailable: isPgStartWait,
      waitMs: config.DEPENDENCY_WAIT_MS,
      logger,
    });
    migrated = true;
    await waitForDependency({
      dependency: 'Redis',
      target: endpointOf(config.REDIS_URL, 6379),
      attempt: () => pingRedis(config.REDIS_URL),
      isUnavailable: isRedisStartWait,
      waitMs: config.DEPENDENCY_WAIT_MS,
      logger,
    });
  } catch (error) {
    await new Promise<void>((resolve) => ops.close(() => resolve()));
    await reads.close().catch(() => undefined);
    marksRedis?.disconnect();
    await pool.end().catch(() => undefined);
    throw error;
  }

  if (reads.hasReplica)
    registerCounterTotals(
      metrics.registry,
      METRIC_NAMES.dbReads,
      'Lag-tolerant reads by the server that answered them (DATABASE_READ_URL).',
      'source',
      () => reads.served,
    );
  // Queue depth, read at scrape time on a connection of its own that fails fast while Redis is down.
  const depthRedis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  depthRedis.on('error', (err: Error) => logger.debug({ err: err.message }, 'queue depth redis error'));
  const depthQueue = new Queue(queueNameOf(def.service), { connection: depthRedis, prefix: config.BUS_PREFIX });
  depthQueue.on('error', (err: Error) => logger.debug({ err: err.message }, 'queue depth error'));
  registerQueueDepth(metrics.registry, queueNameOf(def.service), () =>
    depthQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
  );

  const handlers = {
    ...withWriteMarks(
      def.catalog,
      def.createHandlers({ pool, reads, logger, config, replica, metrics: metrics.registry }),
      reads,
    ),
    [MUTATION_OUTCOME_OP]: createMutationOutcomeHandler(pool),
  };
  const recorded = withMutationRecords(catalog, handlers, {
    pool,
    logger,
    exitAfterCommitOp: config.TEST_EXIT_AFTER_COMMIT_OP,
  });
  worker = new ServiceWorker({
    service: def.service,
    catalog,
    handlers: instrumentHandlers(metrics.registry, def.service, recorded),
    redisUrl: config.REDIS_URL,
    prefix: config.BUS_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    lockDurationMs: config.BUS_LOCK_MS,
    stalledIntervalMs: config.BUS_STALLED_INTERVAL_MS,
    handoff: config.BUS_HANDOFF,
    logger,
  });
  await worker.start();
  const drainRedis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  drainRedis.on('error', (err: Error) => logger.debug({ err: err.message }, 'audit drain redis error'));
  const drain = new OutboxDrain({
    source: def.service,
    pool,
    redis: drainRedis,
    prefix: config.BUS_PREFIX,
    intervalMs: config.AUDIT_DRAIN_MS,
    routes: def.outboxRoutes,
    logger,
  });
  drain.start();

  const address = ops.address();
  const opsPort = typeof address === 'object' && address !== null ? address.port : config.OPS_PORT;
  logger.info({ service: def.service, replica, opsPort, schema: config.DB_SCHEMA }, 'service started');

  return {
    opsPort,
    replica,
    async stop() {
      // Every resource gets its close attempt even when one fails; the first failure is thrown at the end.
      await runTeardown(
        [
          ['bus worker', () => worker?.close()],
          ['service', () => def.onStop?.()],
          ['drain', () => drain.stop()],
          ['drain Redis', () => drainRedis.disconnect()],
          ['queue depth', () => depthQueue.close().catch(() => undefined)],
          ['queue depth Redis', () => depthRedis.disconnect()],
          ['ops server', () => new Promise<void>((resolve) => ops.close(() => resolve()))],
          ['read replica', () => reads.close()],
          ['read marks Redis', () => marksRedis?.disconnect()],
          ['PostgreSQL pool', () => pool.end()],
        ],
        (step, err) => logger.error({ err, service: def.service, step }, 'service teardown step failed'),
      );
      logger.info({ service: def.service }, 'service stopped');
    },
  };
}
