import { deadlinePassedError } from '@dagu-mcp/bus';
import {
  createStorageErrors,
  recordMutation,
  withTransaction,
  type MutationAuthor,
  type MutationEntry,
  type Pool,
  type PoolClient,
} from '@dagu-mcp/runtime';

/** Until when a change may commit, and who makes it. */
export interface MutationFence {
  /** Epoch ms; past it nothing commits (the job's deadline, or less a commit margin); absent: no fence. */
  readonly deadline?: number | undefined;
  /**
   * The bus job whose change this is: its record is written with it. Absent only where a
   * store is driven outside a bus job (its own integration tests): nothing is recorded.
   */
  readonly author?: MutationAuthor | undefined;
}

/** The fence of a bus job's change: its deadline, and the job as the author. */
export function fenceOf(ctx: MutationAuthor & { readonly deadline: number }): MutationFence {
  return { deadline: ctx.deadline, author: ctx };
}

/** Writes `entry` as the change's mutation record, in the change's transaction. */
export type RecordMutation = (entry: MutationEntry) => Promise<void>;

/** The failure mapping and the one mutation shape of one service's store. */
export interface Store {
  /**
   * Runs one operation of the store and rethrows its failure classified (runtime's
   * PostgreSQL classifier): an outage or a statement cut by the deadline is
   * `resource_unavailable`, anything else unchanged.
   */
  readonly run: <T>(operation: () => Promise<T>) => Promise<T>;
  /**
   * One change of the store (dagu-model §10 "never apply after a deadline"; docs/reliability.md):
   * `fn` runs in a transaction whose statements cannot outlast `fence.deadline`; it commits
   * only before it, else rolls back and throws the bus's deadline error. `record` writes the
   * change's mutation record (by `fence.author`) in the same transaction, so a change never
   * lacks its author.
   *
   * @throws DaguError `resource_unavailable` (PostgreSQL down, or the deadline passed, before
   *   or during the transaction); `conflict` from `record` when another request of the same
   *   principal holds the idempotency key; whatever `fn` throws, after the rollback
   */
  readonly mutate: <T>(
    pool: Pool,
    fence: MutationFence,
    fn: (client: PoolClient, record: RecordMutation) => Promise<T>,
  ) => Promise<T>;
}

/**
 * The store of one service, named as its unavailable message says it, e.g.
 * `createStore('DAG store')` → "The DAG store (PostgreSQL) is currently unavailable."
 */
export function createStore(name: string): Store {
  const errors = createStorageErrors({ store: name, deadlineError: deadlinePassedError });
  return {
    run: errors.run,
    mutate: (pool, { deadline, author }, fn) =>
      errors.run(async () => {
        if (deadline !== undefined && Date.now() >= deadline) throw deadlinePassedError();
        const record = (client: PoolClient): RecordMutation =>
          author === undefined ? async () => undefined : (entry) => recordMutation(client, author, entry);
        return withTransaction(pool, (client) => fn(client, record(client)), {
          ...(deadline !== undefined ? { deadline } : {}),
          onLate: deadlinePassedError,
        });
      }),
  };
}
