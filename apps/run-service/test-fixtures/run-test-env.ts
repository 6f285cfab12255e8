import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHandlerContext, SILENT_LOGGER, type HandlerContext } from '@dagu-mcp/bus';
import { DaguError, type Principal, type RunDetail, type RunEvent } from '@dagu-mcp/contracts';
import { createLogger, createPool, migrate, type Logger, type Pool } from '@dagu-mcp/runtime';
import { defaultRunConfig, type RunConfig } from '../src/config/run-config';
import { RUN_MIGRATIONS } from '../src/store/migrations';
import { stepEnvBase } from '../src/core/env-merge';
import type { StepLauncher } from '../src/core/step-launch';
import { RunEngine } from '../src/engine/run-engine';
import { TERMINAL_RUN_STATUSES } from '@dagu-mcp/contracts';
import type { RunEventPublisher } from '../src/events/run-event-publisher';
import { RootTaggingPublisher } from '../src/events/root-tagging-publisher';
import { getRunDetail } from '../src/read/run-detail';
import type { RunDeps } from '../src/runs/run-deps';
import { startRun } from '../src/runs/run-start';

/**
 * Integration-test environment of run-service (CONTRIBUTING §10): a migrated
 * PostgreSQL schema of its own (database `test`), an engine over it, and
 * helpers to start runs and wait for them. Dropped and closed by `close()`.
 */

/** The PostgreSQL of the integration tier (trust auth, database `test`). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The Redis of the integration tier. */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A random schema name for `label`. */
export function randomSchemaName(label: string): string {
  return `test_run_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
}

/**
 * A pool on a fresh schema `label`_… with run-service's migrations applied,
 * and its teardown (drops the schema, ends the pool): for repository tests
 * that need no engine.
 *
 * @returns `{ pool, drop }`; call `drop` in `afterAll`
 */
export async function migratedTestPool(label: string): Promise<{ pool: Pool; drop: () => Promise<void> }> {
  const schema = randomSchemaName(label);
  const pool = createPool({
    url: TEST_DATABASE_URL,
    schema,
    max: 4,
    logger: createLogger({ name: `${label}-test`, level: 'silent' }),
  });
  await migrate(pool, schema, RUN_MIGRATIONS);
  const drop = async (): Promise<void> => {
    try {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await pool.end();
    }
  };
  return { pool, drop };
}

/** Records the events the engine publishes (the publisher is run-service's own interface, not a library). */
export class RecordingPublisher implements RunEventPublisher {
  readonly events: RunEvent[] = [];
  async publish(event: RunEvent): Promise<void> {
    this.events.push(event);
  }
  async close(): Promise<void> {}
}

/** A migrated schema, its pool, and an engine. */
export interface RunTestEnv {
  readonly schema: string;
  readonly pool: Pool;
  readonly engine: RunEngine;
  readonly deps: RunDeps;
  readonly publisher: RecordingPublisher;
  readonly config: RunConfig;
  /** Starts a run of `spec` as `name`; resolves with its id once recorded. */
  start(
    name: string,
    spec: string,
    extra?: { params?: string; enqueue?: boolean; dagRunId?: string; singleton?: boolean; labels?: string[] },
  ): Promise<string>;
  /** Polls the run detail until the run reached a terminal status (or `timeoutMs`). */
  waitForEnd(name: string, dagRunId: string, timeoutMs?: number): Promise<RunDetail>;
  detail(name: string, dagRunId: string): Promise<RunDetail>;
  close(): Promise<void>;
}

/** A handler context with a deadline `ms` from now. */
export function testContext(
  ms = 10_000,
  principal: Principal = { id: 'user-1', subject: 'alice', role: 'admin', credentialType: 'api_key' },
): HandlerContext {
  return createHandlerContext({
    principal,
    deadline: Date.now() + ms,
    op: 'test',
    jobId: `job-${randomBytes(6).toString('hex')}`,
    traceContext: {},
    logger: SILENT_LOGGER,
  }).context;
}

/**
 * Creates a schema, migrates it and starts an engine (queue dispatcher and
 * heartbeat running).
 */
export async function createRunTestEnv(
  label: string,
  overrides: Partial<RunConfig> = {},
  launcher?: StepLauncher,
  options: {
    /** Another PostgreSQL (a throwaway one a test stops); default {@link TEST_DATABASE_URL}. */
    databaseUrl?: string;
    /** The engine's logger; default silent. */
    logger?: Logger;
  } = {},
): Promise<RunTestEnv> {
  const schema = randomSchemaName(label);
  const logger: Logger = options.logger ?? createLogger({ name: 'run-service-test', level: 'silent' });
  const pool = createPool({ url: options.databaseUrl ?? TEST_DATABASE_URL, schema, max: 10, logger });
  await migrate(pool, schema, RUN_MIGRATIONS);
  const workDir = await mkdtemp(join(tmpdir(), 'run-test-'));
  const config = defaultRunConfig({
    workDir,
    queuePollMs: 200,
    heartbeatMs: 500,
    killGraceMs: 2000,
    stopGraceMs: 5000,
    ...overrides,
  });
  const publisher = new RecordingPublisher();
  // As in run-service.ts: child-run events get `root` on their way to the recorder.
  const tagging = new RootTaggingPublisher(publisher, pool, logger);
  const engine = new RunEngine({
    pool,
    config,
    logger,
    replica: 'test-replica',
    publisher: tagging,
    processEnv: stepEnvBase(process.env, launcher?.identity),
    ...(launcher !== undefined ? { launcher } : {}),
  });
  engine.start();
  const deps: RunDeps = {
    pool,
    engine,
    publisher: tagging,
    requestRemoteStop: async () => undefined,
    replica: 'test-replica',
    config,
    logger,
    // These tests pass every spec; stored DAGs are read through dag-service in the e2e suites.
    storedSpecs: {
      spec: async (name) => {
        throw new DaguError('resource_not_found', `DAG "${name}" does not exist.`);
      },
    },
  };
  const detail = (name: string, dagRunId: string): Promise<RunDetail> =>
    getRunDetail(pool, { dagName: name, dagRunId });
  return {
    schema,
    pool,
    engine,
    deps,
    publisher,
    config,
    detail,
    async start(name, spec, extra = {}) {
      const request = { dagName: name, spec, inline: true, enqueue: extra.enqueue ?? false };
      const optional = {
        ...(extra.params !== undefined ? { params: extra.params } : {}),
        ...(extra.dagRunId !== undefined ? { dagRunId: extra.dagRunId } : {}),
        ...(extra.singleton !== undefined ? { singleton: extra.singleton } : {}),
        ...(extra.labels !== undefined ? { labels: extra.labels } : {}),
      };
      const ref = await startRun(deps, { ...request, ...optional }, testContext());
      return ref.dagRunId;
    },
    async waitForEnd(name, dagRunId, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const run = await detail(name, dagRunId);
        if (TERMINAL_RUN_STATUSES.has(run.status)) return run;
        if (Date.now() > until)
          throw new Error(`run ${dagRunId} did not end within ${timeoutMs} ms (status ${run.statusLabel})`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async close() {
      await engine.shutdown();
      try {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await pool.end();
        await rm(workDir, { recursive: true, force: true });
      }
    },
  };
}

/** The step entry named `name` of a run detail (fails the test when absent). */
/**
 * Another engine on `env`'s database and config — a second replica (or this
 * one restarted, with the same `replica` id) — publishing to a recorder of
 * its own. Not started: call `start()`.
 */
export function createReplicaEngine(env: RunTestEnv, replica: string, name = replica): RunEngine {
  return new RunEngine({
    pool: env.pool,
    config: env.config,
    logger: createLogger({ name, level: 'silent' }),
    replica,
    publisher: new RecordingPublisher(),
    processEnv: stepEnvBase(process.env),
  });
}

export function stepOf(run: RunDetail, name: string): RunDetail['steps'][number] {
  const step = run.steps.find((s) => s.name === name);
  if (step === undefined) throw new Error(`no step ${name} in ${run.steps.map((s) => s.name).join(', ')}`);
  return step;
}
