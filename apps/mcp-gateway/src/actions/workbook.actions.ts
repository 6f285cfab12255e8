import {
  DaguError,
  hasWorkbookExtension,
  requireReadRole,
  runOps,
  WORKBOOK_EXTENSION_MESSAGE,
  type OpReply,
  type Principal,
  type RunOps,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';

/** A workbook to read: the file's path where steps run, and the password of an encrypted workbook. */
export interface WorkbookInput {
  readonly path: string;
  readonly password?: string;
}

/**
 * Reads a workbook (`run.workbook`; Dagu spec 021 Workbook, `workbook.md`):
 * run-service opens the file where steps run. The role is checked first
 * (`developer`, dagu-model §9 as extended by `workbook.md` "Which files": the
 * read opens any file run-service can read), then the extension, so a caller
 * below it learns nothing about paths. The password travels in the bus job
 * only; `run.workbook` `carriesSecret`, so the job is removed from Redis
 * however it ends.
 * @returns the workbook model as run-service replies it
 * @throws DaguError `unauthorized` below developer; `invalid_tool_input` on
 *   `path` for a file that is not `.xlsx`/`.xlsm`; run-service's errors as it replies
 */
export async function readWorkbook(
  bus: BusClient,
  principal: Principal,
  input: WorkbookInput,
): Promise<OpReply<RunOps, 'run.workbook'>> {
  requireReadRole(principal, 'run.workbook');
  const { path, password } = input;
  if (!hasWorkbookExtension(path)) {
    throw new DaguError('invalid_tool_input', WORKBOOK_EXTENSION_MESSAGE, { field: 'path' });
  }
  return bus.call(
    'run',
    runOps,
    'run.workbook',
    { path, ...(password !== undefined ? { password } : {}) },
    { principal },
  );
}
