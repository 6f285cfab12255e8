import {
  DaguError,
  hasWorkbookExtension,
  requireReadRole,
  runOps,
  WORKBOOK_EXTENSION_MESSAGE,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { ReadBackend } from './read-backends';

/**
 * The `workbook` read target (Dagu spec 021 Workbook, `workbook.md`): one
 * `run.workbook` call to run-service, which reads the file where steps run.
 * The role is checked first (`developer`, dagu-model §9 as extended by
 * `workbook.md`: the target opens any file run-service can read), then the
 * extension, so a viewer learns nothing about paths. The password travels in
 * the bus job only; `run.workbook` `carriesSecret`, so the job is removed
 * from Redis however it ends.
 *
 * @throws DaguError `unauthorized` below developer; `invalid_tool_input` on
 *   `path` for another extension; run-service's errors as it replies
 */
export function createWorkbookReadBackend(bus: BusClient): ReadBackend {
  return async (request, principal) => {
    requireReadRole(principal, 'run.workbook');
    const { path = '', password } = request.fields;
    if (!hasWorkbookExtension(path)) {
      throw new DaguError('invalid_tool_input', WORKBOOK_EXTENSION_MESSAGE, { field: 'path' });
    }
    return bus.call(
      'run',
      runOps,
      'run.workbook',
      { path, ...(password !== undefined ? { password } : {}) },
      {
        principal,
      },
    );
  };
}
