import type { MutationAuthor, Pool, PoolClient } from '@dagu-mcp/runtime';
import { fenceOf } from '@dagu-mcp/service-kit';
import { mutate } from '../db/storage-errors';

/** Who writes, and until when (epoch ms): the bus handler context. */
export type RestWriteContext = MutationAuthor & { readonly deadline: number };

/**
 * One transaction that commits only before the request's deadline (CONTRIBUTING "How to add
 * an op"), its PostgreSQL failures classified as the agent store's.
 */
export function writeTx<T>(pool: Pool, ctx: RestWriteContext, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return mutate(pool, fenceOf(ctx), (client) => fn(client));
}

/**
 * The slugs of a workspace's agents whose catalogs bind operation `name` (any version): the
 * agents the gateway announces after a publish or a delete, so their `tools/list` changes.
 */
export async function agentsBinding(db: Pool | PoolClient, workspace: string, name: string): Promise<string[]> {
  const { rows } = await db.query<{ slug: string }>(
    `SELECT slug FROM agents WHERE workspace = $1 AND tools @> $2::jsonb ORDER BY slug`,
    [workspace, JSON.stringify([{ kind: 'rest_operation', operation: name }])],
  );
  return rows.map((r) => r.slug);
}
