import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AddressRanges } from '../net/address-ranges';

/** Raised when the environment does not satisfy an app's config schema. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Parses an app's configuration once, at start (CONTRIBUTING §8).
 *
 * Secrets may come from files: for every key `NAME` of the schema, when
 * `NAME` is unset and `NAME_FILE` is set, the file's content (trailing
 * newline removed) is used.
 *
 * @param schema a zod object schema whose keys are environment variable names
 * @param env    the environment to read (default `process.env`)
 * @returns the parsed, typed config
 * @throws ConfigError naming every bad variable and why, e.g.
 *   `Invalid configuration: PORT: expected number, received "abc"`
 */
export function parseConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const input: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema.shape)) {
    input[key] = readVariable(key, env);
  }
  const result = schema.safeParse(input);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${lines.join('; ')}`);
  }
  return result.data;
}

function readVariable(key: string, env: NodeJS.ProcessEnv): string | undefined {
  const direct = env[key];
  if (direct !== undefined && direct !== '') return direct;
  const file = env[`${key}_FILE`];
  if (file === undefined || file === '') return undefined;
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ConfigError(`Invalid configuration: ${key}_FILE: cannot read ${file} (${reason})`);
  }
}

/** Reusable env-var schemas with the project's defaults. */
export const env = {
  /** Redis URL of the bus. Default `redis://127.0.0.1:6379`. */
  redisUrl: z.url({ protocol: /^rediss?$/ }).default('redis://127.0.0.1:6379'),
  /** PostgreSQL URL. Default `postgres://postgres@127.0.0.1:5432/postgres`. */
  databaseUrl: z.url({ protocol: /^postgres(ql)?$/ }).default('postgres://postgres@127.0.0.1:5432/postgres'),
  /** Privileged PostgreSQL URL for roles and migrations at start only (`DATABASE_ADMIN_URL`); optional. */
  adminDatabaseUrl: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  /** A streaming replica's PostgreSQL URL for lag-tolerant reads (`DATABASE_READ_URL`); optional. */
  readDatabaseUrl: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  /**
   * `DB_PREPARED_STATEMENTS`: distinct parameterized SQL texts a pool runs as named statements
   * (postgres/statement-names.ts), 0–10,000; `0` for none. Default 256.
   */
  preparedStatements: z.coerce.number().int().min(0).max(10_000).default(256),
  /** TCP port, 0–65535. */
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  /**
   * `DEPENDENCY_WAIT_MS`: how long an app waits at start for PostgreSQL and Redis to answer, ms,
   * retrying with backoff (process/dependency-wait.ts); `0`: one attempt. Default 60 s.
   */
  dependencyWaitMs: z.coerce.number().int().min(0).default(60_000),
  /** Positive integer in milliseconds. */
  millis: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  /** Positive integer count. */
  count: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  /** `true`/`false`/`1`/`0`. */
  flag: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1'),
  /**
   * `LOG_PRETTY`: `true` human-readable lines (pino-pretty, one line per event), `false` JSON
   * lines, `auto` (the default) human-readable only when stdout is a terminal, so a redirected
   * log never holds ANSI codes (issue "The first hour", item 8).
   */
  logPretty: z
    .enum(['true', 'false', '1', '0', 'auto'])
    .default('auto')
    .transform((v) => (v === 'auto' ? process.stdout.isTTY === true : v === 'true' || v === '1')),
  /** pino level. Default `info`. */
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** A PostgreSQL identifier used as a schema name. */
  schemaName: (fallback: string) =>
    z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case PostgreSQL identifier')
      .default(fallback),
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: base http(s) URL of an OTLP/HTTP collector; unset = no trace export. */
  otlpEndpoint: z.url({ protocol: /^https?$/ }).optional(),
  /** `OTEL_SERVICE_NAME`: `service.name` of the spans; unset = the app's name. */
  otelServiceName: z.string().min(1).optional(),
  /**
   * `OUTBOUND_ALLOW_CIDRS`: comma-separated CIDR ranges (`127.0.0.1/32,10.20.0.0/16,fd00::/8`)
   * of non-public addresses that outbound calls made on an author's behalf may reach (docs/decisions.md
   * "Outbound calls reach internal addresses only where the deployment allows it"). Default empty: none.
   */
  outboundAllowCidrs: z
    .string()
    .default('')
    .transform((value, ctx) => {
      try {
        return AddressRanges.parse(value.split(','));
      } catch (err) {
        ctx.addIssue({
          code: 'custom',
          message: `${err instanceof Error ? err.message : String(err)}; write ranges like 10.0.0.0/8, comma-separated`,
        });
        return z.NEVER;
      }
    }),
  /** BullMQ key prefix of the bus. Default `dagu`. */
  busPrefix: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/)
    .default('dagu'),
};
