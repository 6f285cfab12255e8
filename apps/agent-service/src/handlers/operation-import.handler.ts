import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { importOperations } from '../rest/operation-import';

/** `operation.import` — payload `{workspace, upstream, document, prefix?}`; reply `{created, refused, skipped}`. Errors: `invalid_request` (field `document` or `upstream`), `unauthorized`. */
export function createOperationImportHandler(pool: Pool): OpHandler<AgentOps, 'operation.import'> {
  return async function operationImport(payload, ctx) {
    return importOperations(pool, payload, ctx);
  };
}
