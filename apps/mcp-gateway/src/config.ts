import { z } from 'zod';
import { env, parseConfig } from '@dagu-mcp/runtime';

/**
 * Gateway settings, parsed once at start from the environment (CONVENTIONS §8).
 *
 * | Variable | Meaning | Default |
 * | --- | --- | --- |
 * | `HOST` | bind address of the public port | `127.0.0.1` (loopback until authentication lands) |
 * | `PORT` | public port: `/mcp`, `/api/v1`, `/healthz`, `/readyz` | `8080` |
 * | `BASE_PATH` | optional mount path, e.g. `/dagu`; MCP is then also at `<BASE_PATH>/mcp` (spec 020) | empty |
 * | `REDIS_URL` | bus Redis | `redis://127.0.0.1:6379` |
 * | `DATABASE_URL` | PostgreSQL | `postgres://postgres@127.0.0.1:5432/postgres` |
 * | `DB_SCHEMA` | the gateway's own schema | `gateway` |
 * | `BUS_PREFIX` | BullMQ key prefix | `dagu` |
 * | `BUS_TIMEOUT_MS` | default deadline of a bus call, ms | `10000` |
 * | `SESSION_IDLE_TTL_MS` | an MCP session idle this long is closed, ms | `1800000` (30 min) |
 * | `BODY_LIMIT_BYTES` | largest accepted request body, bytes | `4194304` (4 MiB) |
 * | `LOG_LEVEL` / `LOG_PRETTY` | pino level / human-readable lines | `info` / `false` |
 */
export const GatewayConfigSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: env.port(8080),
  BASE_PATH: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be empty or a path like /dagu (no trailing slash)')
    .default(''),
  REDIS_URL: env.redisUrl,
  DATABASE_URL: env.databaseUrl,
  DB_SCHEMA: env.schemaName('gateway'),
  BUS_PREFIX: env.busPrefix,
  BUS_TIMEOUT_MS: env.millis(10_000),
  SESSION_IDLE_TTL_MS: env.millis(30 * 60_000),
  BODY_LIMIT_BYTES: env.count(4 * 1024 * 1024),
  LOG_LEVEL: env.logLevel,
  LOG_PRETTY: env.flag(false),
});
export type GatewayConfig = z.output<typeof GatewayConfigSchema>;

/** Parses the gateway config; throws `ConfigError` with every bad variable. */
export function loadGatewayConfig(source: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return parseConfig(GatewayConfigSchema, source);
}
