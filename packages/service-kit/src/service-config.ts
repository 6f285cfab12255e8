import { z } from 'zod';
import { env, parseConfig } from '@dagu-mcp/runtime';

/**
 * Settings every service shares, parsed once at start (CONTRIBUTING §8).
 *
 * | Variable | Meaning | Default |
 * | --- | --- | --- |
 * | `REDIS_URL` | bus Redis | `redis://127.0.0.1:6379` |
 * | `DATABASE_URL` | PostgreSQL | `postgres://postgres@127.0.0.1:5432/postgres` |
 * | `DATABASE_ADMIN_URL` | privileged PostgreSQL connection used at start only: creates the role named by `DATABASE_URL` (with its password), migrates the schema and grants that role rights on it alone (docs/security.md); unset: the `DATABASE_URL` connection migrates (local stack, tests) | — |
 * | `DATABASE_READ_URL` | a streaming replica of `DATABASE_URL` (hot standby) that serves reads tolerating lag: lists, search, ended runs' detail and logs, wiki reads; a read falls back to the primary when the replica is down or more than `DB_READ_MAX_LAG_MS` behind, and a caller's reads after its own change go to the primary until the replica has replayed it (docs/deployment.md "Read replica"); unset: every read goes to `DATABASE_URL` | — |
 * | `DB_READ_MAX_LAG_MS` | how stale a replica read may be, ms: past it reads go to the primary | `2000` |
 * | `DB_READ_CHECK_MS` | how long one measure of the replica's lag is trusted, ms | `250` |
 * | `DB_SCHEMA` | the service's own schema | per service (`dag_service`, …) |
 * | `DB_POOL_SIZE` | pg pool size | `10` |
 * | `DB_PREPARED_STATEMENTS` | distinct parameterized SQL texts run as named statements, planned once per connection (docs/decisions.md "Statements planned once per connection"); `0` for none, as behind a pooler in transaction mode without prepared-statement support | `256` |
 * | `DEPENDENCY_WAIT_MS` | how long the start waits for PostgreSQL and Redis to answer, ms, retrying with backoff (250 ms doubling to 5 s) while `/readyz` answers 503; `0`: one attempt | `60000` |
 * | `BUS_PREFIX` | BullMQ key prefix | `dagu` |
 * | `WORKER_CONCURRENCY` | jobs handled at once per replica (hand-off slots; BullMQ's fetch has as many again) | `64` |
 * | `BUS_LOCK_MS` | job lock; a killed worker's job is recovered after it, ms | `10000` |
 * | `BUS_STALLED_INTERVAL_MS` | how often stalled jobs are looked for, ms | `5000` |
 * | `BUS_HANDOFF` | callers hand requests straight to this replica's idle slots (one Redis hop instead of three); `false` leaves every job to BullMQ's fetch | `true` |
 * | `OPS_HOST` / `OPS_PORT` | ops server (`/healthz`, `/readyz`) | `0.0.0.0` / per service (8081–8083) |
 * | `LOG_LEVEL` | pino level | `info` |
 * | `LOG_PRETTY` | `true`: human-readable lines (one per event); `false`: JSON lines; `auto`: human-readable only when stdout is a terminal (no ANSI codes in a redirected log) | `auto` |
 * | `OTEL_EXPORTER_OTLP_ENDPOINT` | OTLP/HTTP collector base URL that traces are exported to (`/v1/traces` appended); unset: traces are not exported, but trace context still flows through the bus | — |
 * | `OTEL_SERVICE_NAME` | `service.name` of the exported spans | the app's name (`dag-service`, …) |
 * | `AUDIT_DRAIN_MS` | how often the mutation outbox is drained to the gateway's audit trail, ms; `0` stops the drain (tests of a drain that died) | `250` |
 * | `TEST_EXIT_AFTER_COMMIT_OP` | test hook: the process exits (code 137) right after a job of this mutation op committed, before it replies — the "service died between COMMIT and reply" fault; never set in production | — |
 */
export function serviceConfigSchema(defaults: { schema: string; opsPort: number }) {
  return z.object({
    REDIS_URL: env.redisUrl,
    DATABASE_URL: env.databaseUrl,
    DATABASE_ADMIN_URL: env.adminDatabaseUrl,
    DATABASE_READ_URL: env.readDatabaseUrl,
    DB_READ_MAX_LAG_MS: env.millis(2000),
    DB_READ_CHECK_MS: env.millis(250),
    DB_SCHEMA: env.schemaName(defaults.schema),
    DB_POOL_SIZE: env.count(10),
    DB_PREPARED_STATEMENTS: env.preparedStatements,
    DEPENDENCY_WAIT_MS: env.dependencyWaitMs,
    BUS_PREFIX: env.busPrefix,
    WORKER_CONCURRENCY: env.count(64),
    BUS_LOCK_MS: env.millis(10_000),
    BUS_STALLED_INTERVAL_MS: env.millis(5_000),
    BUS_HANDOFF: env.flag(true),
    OPS_HOST: z.string().min(1).default('0.0.0.0'),
    OPS_PORT: env.port(defaults.opsPort),
    LOG_LEVEL: env.logLevel,
    LOG_PRETTY: env.logPretty,
    OTEL_EXPORTER_OTLP_ENDPOINT: env.otlpEndpoint,
    OTEL_SERVICE_NAME: env.otelServiceName,
    AUDIT_DRAIN_MS: z.coerce.number().int().min(0).default(250),
    TEST_EXIT_AFTER_COMMIT_OP: z.string().min(1).optional(),
  });
}
export type ServiceConfig = z.output<ReturnType<typeof serviceConfigSchema>>;

/** Parses a service's config; throws `ConfigError` naming every bad variable. */
export function loadServiceConfig(
  defaults: { schema: string; opsPort: number },
  source: NodeJS.ProcessEnv = process.env,
): ServiceConfig {
  return parseConfig(serviceConfigSchema(defaults), source);
}
