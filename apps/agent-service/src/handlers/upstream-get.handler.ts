import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { getUpstream } from '../rest/upstream-store';

/** `upstream.get` — payload `{workspace, name}`; reply: the upstream without its credential. Errors: `resource_not_found`. */
export function createUpstreamGetHandler(pool: Pool): OpHandler<AgentOps, 'upstream.get'> {
  return async function upstreamGet(payload) {
    return getUpstream(pool, payload);
  };
}
