import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { readForeachItem, readForeachItems } from '../read/foreach-read';

/** `run.foreachItems` — one page of a foreach step's items with counts (021). Errors: `resource_not_found`. */
export function createRunForeachItemsHandler(pool: Pool): OpHandler<RunOps, 'run.foreachItems'> {
  return async function runForeachItems(payload) {
    return readForeachItems(pool, payload);
  };
}

/** `run.foreachItem` — one foreach item and its body steps (021). Errors: `resource_not_found`. */
export function createRunForeachItemHandler(pool: Pool): OpHandler<RunOps, 'run.foreachItem'> {
  return async function runForeachItem(payload) {
    return readForeachItem(pool, payload);
  };
}
