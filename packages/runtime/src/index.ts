/**
 * What every app process shares, one folder per concern: `config/` (env
 * parsing), `logging/` (pino), `postgres/` (pool, transactions, migrations,
 * error classification), `metrics/` (Prometheus), `tracing/`
 * (OpenTelemetry), `shutdown/` (signal handling), `ops/` (the ops HTTP
 * server), `process/` (the main wrapper), `secrets/` (secrets at rest) and `net/`
 * (outbound calls to user-supplied URLs under SSRF guards).
 */
export * from './config/config';
export * from './logging/logger';
export * from './postgres/pool';
export * from './postgres/read-router';
export * from './postgres/replica-lag';
export * from './postgres/migrations';
export * from './postgres/service-role';
export * from './postgres/pg-errors';
export * from './ops/ops-server';
export * from './shutdown/shutdown';
export * from './shutdown/teardown';
export * from './metrics/metrics';
export * from './tracing/tracing';
export * from './process/process-main';
export * from './process/dependency-wait';
export * from './secrets/secret-box';
export * from './secrets/secret-keys';
export * from './postgres/mutation-log';
export * from './net/address-ranges';
export * from './net/address-guard';
export * from './net/guarded-fetch';
export * from './threads/budgeted-threads';
