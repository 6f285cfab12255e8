import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { listUpstreams } from '../rest/upstream-store';

/** `upstream.list` — payload `{workspace}`; reply `{items}` by name, credentials by type only. */
export function createUpstreamListHandler(pool: Pool): OpHandler<AgentOps, 'upstream.list'> {
  return async function upstreamList(payload) {
    return { items: await listUpstreams(pool, payload.workspace) };
  };
}
