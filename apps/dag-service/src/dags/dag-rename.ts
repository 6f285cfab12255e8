import { DaguError, formatDaguUri, type DagRenameReply } from '@dagu-mcp/contracts';
import { isUniqueViolation, type MutationAuthor, type Pool } from '@dagu-mcp/runtime';
import { mutate } from '../db/storage-errors';
import { validateDagChange } from './dag-validation';
import { COMMIT_MARGIN_MS } from './dag.repository';

/**
 * Renames a stored DAG (Dagu spec 022b `rename_dag`) in one transaction
 * committed only before `deadline` less {@link COMMIT_MARGIN_MS}: the row
 * takes the new name (its spec, schedule, labels, `suspended` and
 * `created_at` stay; the normalized model is rebuilt under the new name;
 * `version` + 1) and a `dag.renamed` mutation row with `details {from, to}`
 * is written beside it. That row is the outbox of the move's other half:
 * the drain hands it to run-service (`DAG_MOVES_QUEUE`), which moves the
 * run history — so a process dying after this commit loses nothing
 * (docs/decisions.md).
 *
 * @returns `undefined` when no DAG `name` exists (the caller builds the did-you-mean error)
 * @throws DaguError `conflict` on `newName` when a DAG of that name exists;
 *   `resource_unavailable` past the deadline or with PostgreSQL down (nothing written)
 */
export async function renameDag(
  pool: Pool,
  name: string,
  newName: string,
  deadline: number,
  author?: MutationAuthor,
): Promise<DagRenameReply | undefined> {
  try {
    return await mutate(pool, { deadline: deadline - COMMIT_MARGIN_MS, author }, async (client, record) => {
      const found = await client.query<{ spec: string }>('SELECT spec FROM dags WHERE name = $1 FOR UPDATE', [name]);
      const row = found.rows[0];
      if (row === undefined) return undefined;
      const taken = await client.query('SELECT 1 FROM dags WHERE name = $1', [newName]);
      if ((taken.rowCount ?? 0) > 0) throw targetTaken(newName);
      // The stored spec was valid when written; a rule added since may refuse it, and the
      // model then keeps its old shape under the new name rather than blocking the rename.
      const { write } = validateDagChange(newName, row.spec);
      await client.query(
        `UPDATE dags SET name = $2, normalized = COALESCE($3::jsonb, jsonb_set(normalized, '{name}', to_jsonb($2::text))),
           version = version + 1, updated_at = clock_timestamp() WHERE name = $1`,
        [name, newName, write === undefined ? null : JSON.stringify(write.normalized)],
      );
      await record({
        action: 'dag.renamed',
        target: formatDaguUri({ kind: 'dag_spec', name: newName }),
        details: { from: name, to: newName },
      });
      return { name: newName, previousName: name, renamed: true as const };
    });
  } catch (error) {
    // Another request created `newName` between the check and the update.
    if (isUniqueViolation(error)) throw targetTaken(newName);
    throw error;
  }
}

function targetTaken(newName: string): DaguError {
  return new DaguError('conflict', `DAG "${newName}" already exists; choose another newName.`, { field: 'newName' });
}
