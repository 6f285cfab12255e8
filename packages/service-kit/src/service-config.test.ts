import { ConfigError } from '@dagu-mcp/runtime';
import { loadServiceConfig } from './service-config';

/** The settings every service shares (CONTRIBUTING §8): defaults, overrides, and refusals naming the variable. */
const defaults = { schema: 'dag_service', opsPort: 8081 };

describe('loadServiceConfig', () => {
  it('fills every default from an empty environment', () => {
    expect(loadServiceConfig(defaults, {})).toEqual({
      REDIS_URL: 'redis://127.0.0.1:6379',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
      DB_READ_MAX_LAG_MS: 2000,
      DB_READ_CHECK_MS: 250,
      DB_SCHEMA: 'dag_service',
      DB_POOL_SIZE: 10,
      DB_PREPARED_STATEMENTS: 256,
      DEPENDENCY_WAIT_MS: 60_000,
      BUS_PREFIX: 'dagu',
      WORKER_CONCURRENCY: 64,
      BUS_LOCK_MS: 10_000,
      BUS_STALLED_INTERVAL_MS: 5_000,
      BUS_HANDOFF: true,
      OPS_HOST: '0.0.0.0',
      OPS_PORT: 8081,
      LOG_LEVEL: 'info',
      // `auto`: human-readable only when stdout is a terminal.
      LOG_PRETTY: process.stdout.isTTY === true,
      AUDIT_DRAIN_MS: 250,
    });
  });

  it('takes every variable from the environment', () => {
    const config = loadServiceConfig(defaults, {
      REDIS_URL: 'rediss://cache:6380/2',
      DATABASE_URL: 'postgresql://svc:pw@db:5432/dagu',
      DATABASE_READ_URL: 'postgresql://svc:pw@db-replica:5432/dagu',
      DB_READ_MAX_LAG_MS: '5000',
      DB_READ_CHECK_MS: '100',
      DB_SCHEMA: 'dag_service_2',
      DB_POOL_SIZE: '4',
      BUS_PREFIX: 'staging.dagu',
      WORKER_CONCURRENCY: '32',
      BUS_LOCK_MS: '30000',
      BUS_STALLED_INTERVAL_MS: '1000',
      BUS_HANDOFF: 'false',
      OPS_HOST: '127.0.0.1',
      OPS_PORT: '0',
      LOG_LEVEL: 'debug',
      LOG_PRETTY: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318',
      OTEL_SERVICE_NAME: 'dag-service-blue',
    });
    expect(config).toMatchObject({
      REDIS_URL: 'rediss://cache:6380/2',
      DATABASE_READ_URL: 'postgresql://svc:pw@db-replica:5432/dagu',
      DB_READ_MAX_LAG_MS: 5000,
      DB_READ_CHECK_MS: 100,
      DB_SCHEMA: 'dag_service_2',
      DB_POOL_SIZE: 4,
      BUS_PREFIX: 'staging.dagu',
      WORKER_CONCURRENCY: 32,
      BUS_LOCK_MS: 30_000,
      BUS_STALLED_INTERVAL_MS: 1000,
      BUS_HANDOFF: false,
      OPS_HOST: '127.0.0.1',
      OPS_PORT: 0,
      LOG_LEVEL: 'debug',
      LOG_PRETTY: true,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318',
      OTEL_SERVICE_NAME: 'dag-service-blue',
    });
  });

  it.each([
    ['BUS_HANDOFF', '0', false],
    ['BUS_HANDOFF', 'true', true],
    ['LOG_PRETTY', 'false', false],
    ['LOG_PRETTY', 'true', true],
    ['LOG_PRETTY', 'auto', process.stdout.isTTY === true],
  ])('reads the flag %s=%p as %p', (name, value, expected) => {
    expect(loadServiceConfig(defaults, { [name]: value })[name as 'BUS_HANDOFF' | 'LOG_PRETTY']).toBe(expected);
  });

  it.each([
    ['REDIS_URL', 'http://cache:6379'],
    ['DATABASE_URL', 'mysql://db/x'],
    ['DATABASE_READ_URL', 'mysql://replica/x'],
    ['DB_READ_MAX_LAG_MS', '0'],
    ['DB_SCHEMA', 'Dag-Service'],
    ['DB_POOL_SIZE', '0'],
    ['WORKER_CONCURRENCY', 'many'],
    ['BUS_LOCK_MS', '-5'],
    ['BUS_PREFIX', 'da gu'],
    ['BUS_HANDOFF', 'yes'],
    ['OPS_PORT', '70000'],
    ['DB_PREPARED_STATEMENTS', '-1'],
    ['LOG_LEVEL', 'verbose'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'grpc://otel:4317'],
  ])('refuses %s=%p with a ConfigError naming it', (name, value) => {
    expect(() => loadServiceConfig(defaults, { [name]: value })).toThrow(ConfigError);
    expect(() => loadServiceConfig(defaults, { [name]: value })).toThrow(
      new RegExp(`^Invalid configuration: ${name}: `),
    );
  });

  it('names every bad variable at once', () => {
    expect(() => loadServiceConfig(defaults, { DB_POOL_SIZE: 'x', OPS_PORT: '-1' })).toThrow(
      /DB_POOL_SIZE: .*; OPS_PORT: /,
    );
  });
});
