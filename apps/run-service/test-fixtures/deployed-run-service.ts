import { rm } from 'node:fs/promises';
import { createPool, type Logger } from '@dagu-mcp/runtime';
import { deleteKeysWithPrefix } from '../../../packages/bus/test-fixtures/bus-test-env';
import { loadServiceConfig, startService, type RunningService } from '@dagu-mcp/service-kit';
import type { RunConfig } from '../src/config/run-config';
import { stepEnvBase } from '../src/core/env-merge';
import { createRunService } from '../src/run-service';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './run-test-env';

/**
 * Starts one run-service replica as it is deployed — the service-kit host, its BullMQ worker and
 * hand-off lane, PostgreSQL schema `schema`, bus prefix `prefix` on the test Redis, the ops
 * server on a free loopback port — with the engine settings `runConfig`. Stop it with
 * `service.stop()`; the schema and the Redis keys stay for the caller to drop.
 */
export function startDeployedRunService(
  schema: string,
  prefix: string,
  runConfig: RunConfig,
  logger: Logger,
): Promise<RunningService> {
  const config = loadServiceConfig(
    { schema: 'run_service', opsPort: 0 },
    {
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      DB_SCHEMA: schema,
      BUS_PREFIX: prefix,
      OPS_PORT: '0',
      OPS_HOST: '127.0.0.1',
    },
  );
  return startService(createRunService({ runConfig, processEnv: stepEnvBase(process.env) }), config, logger);
}

/** Drops what a deployed test replica left: its schema, its bus keys and the runs' working directory. */
export async function dropDeployedState(
  schema: string,
  prefix: string,
  workDir: string,
  logger: Logger,
): Promise<void> {
  const pool = createPool({ url: TEST_DATABASE_URL, schema, logger });
  try {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await pool.end();
  }
  await deleteKeysWithPrefix(TEST_REDIS_URL, prefix);
  await rm(workDir, { recursive: true, force: true });
}
