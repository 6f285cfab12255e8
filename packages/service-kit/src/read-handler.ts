import type { HandlerContext } from '@dagu-mcp/bus';
import type { Pool, ReadRouter } from '@dagu-mcp/runtime';

/**
 * A read handler served through the service's {@link ReadRouter} (issue 47):
 * each job runs on the replica when the router allows it for the job's
 * principal (`ctx.principal.id`: its own writes are read from the primary),
 * else on the primary. `make` is called once per pool (the handler, and what
 * it is built over, are built once, CONTRIBUTING §16), never per job.
 *
 * @param reads  the service's router (`ServiceDeps.reads`); unset: `make(primary)` as it is
 * @param primary the service's pool
 * @param make   builds the handler over one pool; it may throw `ReplicaDeclined` on the replica
 * @returns a handler of the same shape
 */
export function onReads<A, R>(
  reads: ReadRouter | undefined,
  primary: Pool,
  make: (db: Pool) => (payload: A, ctx: HandlerContext) => Promise<R>,
): (payload: A, ctx: HandlerContext) => Promise<R> {
  const onPrimary = make(primary);
  if (reads?.hasReplica !== true) return onPrimary;
  let onReplica: ((payload: A, ctx: HandlerContext) => Promise<R>) | undefined;
  const handlerOf = (db: Pool) => (db === primary ? onPrimary : (onReplica ??= make(db)));
  return (payload, ctx) => reads.read(ctx.principal.id, (db) => handlerOf(db)(payload, ctx));
}
