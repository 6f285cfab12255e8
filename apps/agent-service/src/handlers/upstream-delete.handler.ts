import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { deleteUpstream } from '../rest/upstream-store';

/** `upstream.delete` — payload `{workspace, name}`; reply `{name, deleted}`. Errors: `resource_not_found`, `conflict` (used by an operation), `unauthorized`. */
export function createUpstreamDeleteHandler(pool: Pool): OpHandler<AgentOps, 'upstream.delete'> {
  return async function upstreamDelete(payload, ctx) {
    return deleteUpstream(pool, payload, ctx);
  };
}
