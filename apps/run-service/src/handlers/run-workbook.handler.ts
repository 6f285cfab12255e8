import type { OpHandler } from '@dagu-mcp/bus';
import { requireReadRole, type RunOps } from '@dagu-mcp/contracts';
import type { WorkbookReader } from '../workbook/workbook-reader';

/**
 * `run.workbook` — the workbook model of a file where steps run (Dagu spec
 * 021 `workbook`, `workbook.md`). Needs `developer` (checked again here,
 * whoever sent the request). Errors: `unauthorized`, `invalid_tool_input`
 * (`path`, `password`), `resource_not_found`, `resource_unavailable`.
 */
export function createRunWorkbookHandler(reader: WorkbookReader): OpHandler<RunOps, 'run.workbook'> {
  return async function runWorkbook(payload, ctx) {
    requireReadRole(ctx.principal, 'run.workbook');
    return reader.read(payload, ctx.deadline);
  };
}
