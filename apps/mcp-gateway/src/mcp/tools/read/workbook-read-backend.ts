import type { BusClient } from '@dagu-mcp/bus';
import { readWorkbook } from '../../../actions/workbook.actions';
import type { ReadBackend } from './read-backends';

/**
 * The `workbook` read target (Dagu spec 021 Workbook, `workbook.md`): the
 * workbook read action (actions/workbook.actions.ts), which checks the role
 * (`developer`) before the extension, then asks run-service to read the file
 * where steps run.
 *
 * @throws DaguError `unauthorized` below developer; `invalid_tool_input` on
 *   `path` for another extension; run-service's errors as it replies
 */
export function createWorkbookReadBackend(bus: BusClient): ReadBackend {
  return async (request, principal) => {
    const { path = '', password } = request.fields;
    return readWorkbook(bus, principal, { path, ...(password !== undefined ? { password } : {}) });
  };
}
