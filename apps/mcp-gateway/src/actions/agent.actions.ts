import {
  agentOps,
  requireOpRole,
  type AgentOps,
  type OpReply,
  type OpRequest,
  type Principal,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';

/**
 * Published agents: the actions every face calls to
 * list, read and change an agent and its catalog. agent-service owns, checks
 * and audits them, a catalog's bindings included (their schema, unique tool
 * names, the author kept per binding); no other service is asked here. A
 * binding whose DAG or operation is missing is left out of `tools/list` when
 * the gateway builds the agent's tools, not refused here.
 */

/**
 * Tells every gateway replica that an agent changed, so its `tools/list` is
 * rebuilt at once (the gateway's `AgentCatalogCache.announce`). It comes in
 * as a callback because the cache lives in `agents/`, above this floor.
 */
export type AnnounceAgent = (workspace: string, slug: string) => Promise<void>;

/**
 * What a change of an agent, its catalog or an operation it binds needs. The
 * announcement is part of the change, not of a face: whichever face makes
 * the change, agents must not keep serving the old catalog, so the action
 * makes it and the option is required.
 */
export interface AnnounceOptions {
  readonly announce: AnnounceAgent;
}

type Request<K extends keyof AgentOps> = OpRequest<AgentOps, K>;
type Reply<K extends keyof AgentOps> = OpReply<AgentOps, K>;

/**
 * The agents of a workspace (`agent.list`), by slug, without their catalogs.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `invalid_tool_input` on a bad workspace
 */
export async function listAgents(
  bus: BusClient,
  principal: Principal,
  input: Request<'agent.list'>,
): Promise<Reply<'agent.list'>> {
  requireOpRole(principal, 'agent.list');
  return bus.call('agent', agentOps, 'agent.list', input, { principal });
}

/**
 * One agent with its catalog (`agent.get`): its id (which its keys and usage
 * are filed under), state, catalog and catalog version.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `resource_not_found` when no such agent
 */
export async function getAgent(
  bus: BusClient,
  principal: Principal,
  input: Request<'agent.get'>,
): Promise<Reply<'agent.get'>> {
  requireOpRole(principal, 'agent.get');
  return bus.call('agent', agentOps, 'agent.get', input, { principal });
}

/**
 * Creates an agent (`agent.create`; state `draft` unless given) and announces it.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `conflict` when the slug is taken in the workspace
 */
export async function createAgent(
  bus: BusClient,
  principal: Principal,
  input: Request<'agent.create'>,
  options: AnnounceOptions,
): Promise<Reply<'agent.create'>> {
  requireOpRole(principal, 'agent.create');
  const agent = await bus.call('agent', agentOps, 'agent.create', input, { principal });
  await options.announce(input.workspace, agent.slug);
  return agent;
}

/**
 * Changes an agent's title, description or state (`agent.update`: draft,
 * published, disabled) and announces it: a state change starts or stops
 * its endpoint on every replica.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `resource_not_found` when no such agent
 */
export async function updateAgent(
  bus: BusClient,
  principal: Principal,
  input: Request<'agent.update'>,
  options: AnnounceOptions,
): Promise<Reply<'agent.update'>> {
  requireOpRole(principal, 'agent.update');
  const agent = await bus.call('agent', agentOps, 'agent.update', input, { principal });
  await options.announce(input.workspace, input.slug);
  return agent;
}

/**
 * Deletes an agent and its catalog (`agent.delete`) and announces it, so no
 * replica serves it any more.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `resource_not_found` when no such agent
 */
export async function deleteAgent(
  bus: BusClient,
  principal: Principal,
  input: Request<'agent.delete'>,
  options: AnnounceOptions,
): Promise<Reply<'agent.delete'>> {
  requireOpRole(principal, 'agent.delete');
  const reply = await bus.call('agent', agentOps, 'agent.delete', input, { principal });
  await options.announce(input.workspace, input.slug);
  return reply;
}

/**
 * Replaces an agent's catalog (`agent.setTools`; at most `AGENT_TOOLS_MAX`
 * bindings, tool names unique per agent; a new or changed binding records the
 * principal as its author, whose role bounds the tool's calls) and announces it; the catalog version grows.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `invalid_tool_input` on a binding that
 *   fails its schema, `conflict` on a tool-name collision, `resource_not_found` when no such agent
 */
export async function setAgentTools(
  bus: BusClient,
  principal: Principal,
  input: Request<'agent.setTools'>,
  options: AnnounceOptions,
): Promise<Reply<'agent.setTools'>> {
  requireOpRole(principal, 'agent.setTools');
  const agent = await bus.call('agent', agentOps, 'agent.setTools', input, { principal });
  await options.announce(input.workspace, input.slug);
  return agent;
}
