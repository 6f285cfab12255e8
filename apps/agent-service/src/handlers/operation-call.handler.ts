import type { OpHandler } from '@dagu-mcp/bus';
import type { AgentOps } from '@dagu-mcp/contracts';
import type { OperationCaller } from '../rest/operation-call';

/** `operation.call` — payload `{workspace, name, version, arguments}`, principal: the agent with its binding author's role; reply: the tool result (`isError`, `content`, `structuredContent`). Errors: `invalid_tool_input` (field = the argument), `resource_not_found`, `unauthorized` (below operator). */
export function createOperationCallHandler(caller: OperationCaller): OpHandler<AgentOps, 'operation.call'> {
  return async function operationCall(payload, ctx) {
    return caller.call(payload, ctx.principal);
  };
}
