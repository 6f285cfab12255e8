import {
  agentOps,
  bindingOfStored,
  bindingToolName,
  DaguError,
  requireOpRole,
  type AgentBinding,
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

/**
 * Adds one binding to an agent's catalog, or replaces the one of that tool name
 * (`PUT …/agents/{agent}/tools/{toolName}`; docs/decisions.md "Admin APIs that round-trip"): reads the catalog, changes
 * that binding alone (its place kept; a new one goes last) and writes it back with
 * `agent.setTools` conditional on the version read, so a change made in between is not
 * lost. A binding without `name` whose default tool name is not `toolName` is named
 * `toolName`; the other bindings keep their authors.
 *
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9); `invalid_request` (field
 *   `name`) when the binding's `name` is another tool name; `conflict` when the catalog changed
 *   between the read and the write (field `ifVersion`: read it again) or on a tool-name
 *   collision; `resource_not_found` when no such agent
 */
export async function putAgentTool(
  bus: BusClient,
  principal: Principal,
  input: { workspace: string; slug: string; toolName: string; binding: AgentBinding },
  options: AnnounceOptions,
): Promise<Reply<'agent.setTools'>> {
  requireOpRole(principal, 'agent.setTools');
  let binding = input.binding;
  if (bindingToolName(binding) !== input.toolName) {
    if (binding.name !== undefined)
      throw new DaguError(
        'invalid_request',
        `name: the binding is named ${binding.name}, the path ${input.toolName}; leave "name" out or make them equal.`,
        { field: 'name' },
      );
    binding = { ...binding, name: input.toolName };
  }
  const current = await getAgent(bus, principal, { workspace: input.workspace, slug: input.slug });
  const tools = current.tools.map(bindingOfStored);
  const at = current.tools.findIndex((t) => t.toolName === input.toolName);
  if (at >= 0) tools[at] = binding;
  else tools.push(binding);
  const ref = { workspace: input.workspace, slug: input.slug };
  return setAgentTools(bus, principal, { ...ref, tools, ifVersion: current.version }, options);
}

/**
 * Removes the binding of one tool name from an agent's catalog (`DELETE
 * …/agents/{agent}/tools/{toolName}`), conditional on the version read as
 * {@link putAgentTool} is.
 *
 * @throws DaguError `unauthorized` below `manager`; `resource_not_found` (field `toolName`) when
 *   the catalog has no such tool, (field `agent`) when no such agent; `conflict` when the catalog
 *   changed between the read and the write
 */
export async function deleteAgentTool(
  bus: BusClient,
  principal: Principal,
  input: { workspace: string; slug: string; toolName: string },
  options: AnnounceOptions,
): Promise<Reply<'agent.setTools'>> {
  requireOpRole(principal, 'agent.setTools');
  const ref = { workspace: input.workspace, slug: input.slug };
  const current = await getAgent(bus, principal, ref);
  if (!current.tools.some((t) => t.toolName === input.toolName))
    throw new DaguError('resource_not_found', `Agent ${input.slug} has no tool ${input.toolName}.`, {
      field: 'toolName',
    });
  const tools = current.tools.filter((t) => t.toolName !== input.toolName).map(bindingOfStored);
  return setAgentTools(bus, principal, { ...ref, tools, ifVersion: current.version }, options);
}
