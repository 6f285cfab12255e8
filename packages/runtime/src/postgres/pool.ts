import { context, trace } from '@opentelemetry/api';
import { Pool, type PoolClient } from 'pg';
import type { Logger } from '../logging/logger';
import { hasRecordingSpan, recordFailure, SpanKind, startSpan } from '../tracing/tracing';
import { isStaleStatement, StatementNames, withStatementName } from './statement-names';
import { commitOutcomeUnknownError, mayHaveCommitted } from './pg-errors';

export type { Pool, PoolClient };

/**
 * Creates a pg pool whose every connection uses `schema` as search path, with
 * error handlers so a client's failure (PostgreSQL restart, fast shutdown,
 * lost network) is logged instead of crashing the process.
 *
 * pg emits `'error'` on a client whose connection ends unexpectedly, whether
 * it is idle in the pool or checked out (a transaction in progress, a query
 * in flight: the query also rejects). `pool.on('error')` covers idle clients
 * only; a checked-out one had no listener, and the event became an uncaught
 * exception (5 of 5 dag-service crashes on a fast shutdown). Every
 * client therefore gets its own listener when it connects; its holder sees
 * the failure as the rejected query, and pg-pool discards the broken client
 * on release.
 *
 * Parameterized statements run as named (prepared) statements, planned once
 * per connection (statement-names.ts; at most `opts.preparedStatements`
 * distinct texts, default 256, 0 for none). This assumes a session-level
 * connection to PostgreSQL: behind a pooler in transaction mode (PgBouncer
 * before 1.21) set it to 0.
 *
 * @param opts.url     PostgreSQL URL
 * @param opts.schema  the service's own schema (created by migrations)
 * @param opts.max     pool size (default 10)
 * @param opts.preparedStatements  distinct texts named per pool (`DB_PREPARED_STATEMENTS`, default 256)
 * @param opts.connectTimeoutMs  how long a new connection may take, ms (default 5000; a replica's is shorter)
 */
export function createPool(opts: {
  url: string;
  schema: string;
  max?: number;
  preparedStatements?: number;
  connectTimeoutMs?: number;
  logger: Logger;
}): Pool {
  const pool = new Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    options: `-c search_path=${opts.schema},public`,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
  });
  pool.on('error', (err) => opts.logger.warn({ err: err.message }, 'idle PostgreSQL client failed'));
  const names = new StatementNames(opts.preparedStatements ?? 256);
  pool.on('connect', (client: PoolClient) => {
    client.on('error', (err: Error) => opts.logger.warn({ err: err.message }, 'PostgreSQL client failed'));
    wrapQuery(client, names);
  });
  traceQueries(pool);
  return pool;
}

/** Longest SQL text kept on a span (`db.query.text`). */
const MAX_TRACED_SQL = 2000;

/**
 * SQL spans: every query made while a recording span is active (a bus job,
 * a step, …) becomes a CLIENT child span `pg <VERB>` with the statement text.
 * Queries outside a trace (polling loops, migrations) make none.
 *
 * Client queries are wrapped once per physical connection (`connect` event);
 * `pool.query` is re-routed through `pool.connect()` + `client.query()` in
 * the caller's async context, because pg-pool may hand a waiting query a
 * client from inside another caller's `release()`, whose context is not ours.
 * The callback forms of both are left as pg made them (untraced).
 */
function traceQueries(pool: Pool): void {
  const original: unknown = Reflect.get(pool, 'query');
  if (typeof original !== 'function') return;
  Object.defineProperty(pool, 'query', {
    configurable: true,
    writable: true,
    value: function tracedPoolQuery(...args: unknown[]): unknown {
      if (!hasRecordingSpan() || typeof args[args.length - 1] === 'function')
        return Reflect.apply(original, pool, args);
      return pooledQuery(pool, args);
    },
  });
}

async function pooledQuery(pool: Pool, args: unknown[]): Promise<unknown> {
  const client = await pool.connect();
  try {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- applied to its own client, as pg calls it
    const result: unknown = await Reflect.apply(client.query, client, args);
    client.release();
    return result;
  } catch (err) {
    // As pg-pool does: a client whose query failed is not reused.
    client.release(err instanceof Error ? err : true);
    throw err;
  }
}

type AnyFunction = (...args: unknown[]) => unknown;

function isFunction(value: unknown): value is AnyFunction {
  return typeof value === 'function';
}

/**
 * Wraps one connection's `query`: parameterized texts get their statement
 * name, a stale one is refused for good, and queries inside a recording span
 * get a span.
 */
function wrapQuery(client: PoolClient, names: StatementNames): void {
  const original: unknown = Reflect.get(client, 'query');
  if (!isFunction(original)) return;
  Object.defineProperty(client, 'query', {
    configurable: true,
    writable: true,
    value: function namedQuery(...raw: unknown[]): unknown {
      const named = withStatementName(raw, names);
      const text = named.text;
      if (text === undefined) return tracedQuery(client, original, raw);
      // A stale statement is refused for good; outside a transaction its execution is retried
      // unnamed (PostgreSQL refused it before running anything), inside one the error stands.
      const retries = (err: unknown): boolean => {
        if (!isStaleStatement(err)) return false;
        names.refuse(text);
        return client.getTransactionStatus() === 'I';
      };
      const callback = named.args[named.args.length - 1];
      if (isFunction(callback)) {
        // pg-pool's own `pool.query` passes a callback.
        const args = [...named.args];
        args[args.length - 1] = (err: unknown, ...rest: unknown[]): unknown =>
          retries(err) ? tracedQuery(client, original, raw) : Reflect.apply(callback, undefined, [err, ...rest]);
        return tracedQuery(client, original, args);
      }
      const result = tracedQuery(client, original, named.args);
      if (!(result instanceof Promise)) return result;
      return result.catch((err: unknown) => {
        if (retries(err)) return tracedQuery(client, original, raw);
        throw err;
      });
    },
  });
}

/** `original` applied to `client`, in a CLIENT span `pg <VERB>` when a recording span is active. */
function tracedQuery(client: PoolClient, original: AnyFunction, args: unknown[]): unknown {
  if (!hasRecordingSpan() || typeof args[args.length - 1] === 'function') return Reflect.apply(original, client, args);
  const sql = sqlText(args[0]);
  const span = startSpan(`pg ${sql.split(/\s+/, 1)[0]?.toUpperCase() ?? 'QUERY'}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'db.system.name': 'postgresql', 'db.query.text': sql.slice(0, MAX_TRACED_SQL) },
  });
  let result: unknown;
  try {
    result = context.with(trace.setSpan(context.active(), span), (): unknown => Reflect.apply(original, client, args));
  } catch (err) {
    recordFailure(span, err);
    span.end();
    throw err;
  }
  if (result instanceof Promise) {
    return result.then(
      (value: unknown) => {
        span.end();
        return value;
      },
      (err: unknown) => {
        recordFailure(span, err);
        span.end();
        throw err;
      },
    );
  }
  span.end(); // a Submittable (cursor, stream): its end is not followed
  return result;
}

function sqlText(first: unknown): string {
  if (typeof first === 'string') return first.trim();
  if (typeof first === 'object' && first !== null && 'text' in first && typeof first.text === 'string')
    return first.text.trim();
  return 'QUERY';
}

/**
 * Runs `fn` in a transaction and commits only if `deadline` (epoch ms) has not
 * passed; otherwise rolls back and throws what `onLate` returns. This is how a
 * service never applies a mutation after its deadline (docs/architecture.md "Request flow").
 *
 * @throws whatever `fn` throws (after ROLLBACK), or `onLate()` when past the deadline
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  opts: { deadline?: number; onLate?: () => Error } = {},
): Promise<T> {
  const client = await pool.connect();
  try {
    const remaining = opts.deadline === undefined ? undefined : opts.deadline - Date.now();
    // Statements cannot run past the deadline either. One round trip for both (a simple query may
    // hold several statements; every mutation of every service opens a transaction).
    await client.query(
      remaining === undefined ? 'BEGIN' : `BEGIN; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(remaining))}`,
    );
    const result = await fn(client);
    if (opts.deadline !== undefined && Date.now() >= opts.deadline) {
      throw (opts.onLate ?? (() => new Error('deadline passed before commit')))();
    }
    try {
      await client.query('COMMIT');
    } catch (err) {
      // The connection died with the COMMIT in flight: it may have landed. "Failed" would be a lie.
      if (mayHaveCommitted(err)) throw commitOutcomeUnknownError();
      throw err;
    }
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
