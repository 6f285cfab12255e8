import {
  DaguError,
  requireMutationRole,
  type OperationImportReply,
  type OperationImportRequest,
} from '@dagu-mcp/contracts';
import { importOpenApi, type OpenApiImport } from '@dagu-mcp/rest-operations';
import { recordMutation, type Pool } from '@dagu-mcp/runtime';
import { insertImportedOperation } from './operation-store';
import { writeTx, type RestWriteContext } from './rest-write';

/**
 * `POST …/operations/import`: an OpenAPI 3 document
 * pre-fills operations for one upstream, each created with version 1 as a
 * draft (never published: curation stays explicit). Names come from
 * `operationId` (with `prefix`); a name the workspace already has is skipped,
 * never overwritten. Operations that cannot become flat tools are listed in
 * `refused` with the reason.
 *
 * @throws DaguError `invalid_request` (field `document`) when the document is not OpenAPI 3;
 *   `invalid_request` (field `upstream`) for an unknown upstream; `unauthorized` below manager
 */
export async function importOperations(
  pool: Pool,
  input: OperationImportRequest,
  ctx: RestWriteContext,
): Promise<OperationImportReply> {
  requireMutationRole(ctx.principal, 'operation.import');
  let imported: OpenApiImport;
  try {
    imported = await importOpenApi(input.document, input.upstream);
  } catch (err) {
    throw new DaguError('invalid_request', `document: ${err instanceof Error ? err.message : 'not OpenAPI 3'}`, {
      field: 'document',
    });
  }
  const prefix = input.prefix ?? '';
  return writeTx(pool, ctx, async (client) => {
    const upstream = await client.query('SELECT 1 FROM upstreams WHERE workspace = $1 AND name = $2', [
      input.workspace,
      input.upstream,
    ]);
    if (upstream.rowCount === 0)
      throw new DaguError(
        'invalid_request',
        `upstream: workspace ${input.workspace} has no upstream ${input.upstream}.`,
        {
          field: 'upstream',
        },
      );
    const created: OperationImportReply['created'] = [];
    const skipped: string[] = [];
    for (const draft of imported.drafts) {
      const name = `${prefix}${draft.name}`.slice(0, 64);
      const inserted = await insertImportedOperation(
        client,
        input.workspace,
        { ...draft, name },
        ctx.principal.subject,
      );
      if (inserted) created.push({ name, notes: draft.notes });
      else skipped.push(name);
    }
    await recordMutation(client, ctx, {
      action: 'operation.imported',
      target: `upstream:${input.workspace}/${input.upstream}`,
      details: { created: created.map((c) => c.name), skipped, refused: imported.refused.length },
    });
    return { created, refused: imported.refused, skipped };
  });
}
