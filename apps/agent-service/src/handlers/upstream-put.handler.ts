import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import { putUpstream } from '../rest/upstream-store';
import type { SecretSource } from '@dagu-mcp/service-kit';

/** `upstream.put` — payload `{workspace, name, baseUrl, allowHosts?, credential?, defaultHeaders?, timeoutMs?}` (carries a secret); reply: the upstream without its credential and `created`. Errors: `invalid_request`, `unauthorized`, `resource_unavailable` (no key ring). */
export function createUpstreamPutHandler(pool: Pool, secrets: SecretSource): OpHandler<AgentOps, 'upstream.put'> {
  return async function upstreamPut(payload, ctx) {
    return putUpstream(pool, secrets, payload, ctx);
  };
}
