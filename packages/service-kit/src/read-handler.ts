import type { HandlerContext } from '@dagu-mcp/bus';
import { DaguError } from '@dagu-mcp/contracts';
import { ReplicaDeclined, type Pool, type ReadRouter } from '@dagu-mcp/runtime';

/**
 * A read handler served through the service's {@link ReadRouter}:
 * each job runs on the replica when the router allows it for the job's
 * principal (`ctx.principal.id`: its own writes are read from the primary),
 * else on the primary. `make` is called once per pool (the handler, and what
 * it is built over, are built once, CONTRIBUTING §16), never per job.
 *
 * Absence is answered by the primary only: a `resource_not_found` from the
 * replica is declined and asked again of the primary, so a run or page another
 * caller created a moment ago is never reported missing because the replica
 * has not replayed it yet.
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
  const replicaHandler = (db: Pool): ((payload: A, ctx: HandlerContext) => Promise<R>) => {
    const handler = make(db);
    return async (payload, ctx) => {
      try {
        return await handler(payload, ctx);
      } catch (err) {
        if (err instanceof DaguError && err.code === 'resource_not_found') throw new ReplicaDeclined('not found');
        throw err;
      }
    };
  };
  const handlerOf = (db: Pool) => (db === primary ? onPrimary : (onReplica ??= replicaHandler(db)));
  return (payload, ctx) => reads.read(ctx.principal.id, (db) => handlerOf(db)(payload, ctx));
}
