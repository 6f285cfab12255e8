import {
  agentOps,
  requireOpRole,
  type AgentOps,
  type OpReply,
  type OpRequest,
  type Principal,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { AnnounceOptions } from './agent.actions';

/**
 * REST operations as tools: a workspace's upstreams
 * (a credential is write-only: no reply carries it), operations with
 * versions, OpenAPI import, and the two ops a `rest_operation` binding uses
 * (`operation.tool`, `operation.call`). agent-service owns and audits all of
 * it (`upstream.*`, `operation.*` in the audit trail).
 *
 * A write an agent can see (a publish, a delete, new texts of a published
 * operation) announces the agents that bind the operation (`boundAgents` of
 * the reply), so their `tools/list` changes on every gateway replica at once.
 * That belongs to the operation, not to the face that asked for it (an MCP
 * tool publishing an operation must announce as REST does), so the action
 * makes the announcement, through the `announce` option: the catalog cache
 * it reaches lives in `agents/`, above this floor.
 */

type Request<K extends keyof AgentOps> = OpRequest<AgentOps, K>;
type Reply<K extends keyof AgentOps> = OpReply<AgentOps, K>;

async function announceAll(options: AnnounceOptions, workspace: string, slugs: readonly string[]): Promise<void> {
  await Promise.all(slugs.map((slug) => options.announce(workspace, slug)));
}

/**
 * A workspace's upstreams (`upstream.list`), each credential shown by its type only.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9)
 */
export async function listUpstreams(
  bus: BusClient,
  principal: Principal,
  input: Request<'upstream.list'>,
): Promise<Reply<'upstream.list'>> {
  requireOpRole(principal, 'upstream.list');
  return bus.call('agent', agentOps, 'upstream.list', input, { principal });
}

/**
 * One upstream (`upstream.get`), never its credential.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `resource_not_found` when no such upstream
 */
export async function getUpstream(
  bus: BusClient,
  principal: Principal,
  input: Request<'upstream.get'>,
): Promise<Reply<'upstream.get'>> {
  requireOpRole(principal, 'upstream.get');
  return bus.call('agent', agentOps, 'upstream.get', input, { principal });
}

/**
 * Creates or replaces an upstream (`upstream.put`); its credential is stored
 * encrypted and never returned. The reply's `created` tells which it was.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `invalid_request` (field `baseUrl` or
 *   `allowHosts`) for a base URL or allow-list that cannot work
 */
export async function putUpstream(
  bus: BusClient,
  principal: Principal,
  input: Request<'upstream.put'>,
): Promise<Reply<'upstream.put'>> {
  requireOpRole(principal, 'upstream.put');
  return bus.call('agent', agentOps, 'upstream.put', input, { principal });
}

/**
 * Deletes an upstream (`upstream.delete`).
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `resource_not_found`, `conflict` while an operation uses it
 */
export async function deleteUpstream(
  bus: BusClient,
  principal: Principal,
  input: Request<'upstream.delete'>,
): Promise<Reply<'upstream.delete'>> {
  requireOpRole(principal, 'upstream.delete');
  return bus.call('agent', agentOps, 'upstream.delete', input, { principal });
}

/**
 * A workspace's operations (`operation.list`).
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9)
 */
export async function listOperations(
  bus: BusClient,
  principal: Principal,
  input: Request<'operation.list'>,
): Promise<Reply<'operation.list'>> {
  requireOpRole(principal, 'operation.list');
  return bus.call('agent', agentOps, 'operation.list', input, { principal });
}

/**
 * One operation with its versions, newest first (`operation.get`).
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `resource_not_found` when no such operation
 */
export async function getOperation(
  bus: BusClient,
  principal: Principal,
  input: Request<'operation.get'>,
): Promise<Reply<'operation.get'>> {
  requireOpRole(principal, 'operation.get');
  return bus.call('agent', agentOps, 'operation.get', input, { principal });
}

/**
 * Creates an operation (`operation.create`), version 1 a draft: no agent serves
 * a draft, so nothing is announced.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `conflict` (field `name`) when the
 *   workspace has one of that name, `invalid_request` (field `spec.…`) on a spec agent-service refuses
 */
export async function createOperation(
  bus: BusClient,
  principal: Principal,
  input: Request<'operation.create'>,
): Promise<Reply<'operation.create'>> {
  requireOpRole(principal, 'operation.create');
  return bus.call('agent', agentOps, 'operation.create', input, { principal });
}

/**
 * Changes an operation's title, description, or its current draft's spec
 * (`operation.update`). Title and description show in `tools/list` of agents
 * bound to a published version, so those agents are announced when one is published.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `resource_not_found`, `conflict` (field
 *   `spec`) when a spec is given and the latest version is published
 */
export async function updateOperation(
  bus: BusClient,
  principal: Principal,
  input: Request<'operation.update'>,
  options: AnnounceOptions,
): Promise<Reply<'operation.update'>> {
  requireOpRole(principal, 'operation.update');
  const reply = await bus.call('agent', agentOps, 'operation.update', input, { principal });
  if (reply.publishedVersion !== null) await announceAll(options, input.workspace, reply.boundAgents);
  return reply;
}

/**
 * Deletes an operation and its versions (`operation.delete`) and announces
 * the agents that bound it: their tool leaves `tools/list`.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `resource_not_found` when no such operation
 */
export async function deleteOperation(
  bus: BusClient,
  principal: Principal,
  input: Request<'operation.delete'>,
  options: AnnounceOptions,
): Promise<Reply<'operation.delete'>> {
  requireOpRole(principal, 'operation.delete');
  const reply = await bus.call('agent', agentOps, 'operation.delete', input, { principal });
  await announceAll(options, input.workspace, reply.boundAgents);
  return reply;
}

/**
 * A new draft version (`operation.newVersion`): the given spec, else a copy of
 * the latest. A draft is never served, so nothing is announced.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `resource_not_found`, `conflict` (field
 *   `version`) while the latest version is still a draft
 */
export async function newOperationVersion(
  bus: BusClient,
  principal: Principal,
  input: Request<'operation.newVersion'>,
): Promise<Reply<'operation.newVersion'>> {
  requireOpRole(principal, 'operation.newVersion');
  return bus.call('agent', agentOps, 'operation.newVersion', input, { principal });
}

/**
 * Publishes a draft version (`operation.publish`) and announces the agents that
 * bind the operation: those bound to `latest` serve it at once, on every replica.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `resource_not_found` (no such operation,
 *   or field `version`), `invalid_request` (field `spec.upstream`) when its upstream does not exist
 */
export async function publishOperation(
  bus: BusClient,
  principal: Principal,
  input: Request<'operation.publish'>,
  options: AnnounceOptions,
): Promise<Reply<'operation.publish'>> {
  requireOpRole(principal, 'operation.publish');
  const reply = await bus.call('agent', agentOps, 'operation.publish', input, { principal });
  await announceAll(options, input.workspace, reply.boundAgents);
  return reply;
}

/**
 * Imports an OpenAPI 3 document as draft operations of one upstream
 * (`operation.import`; the op's own 30 s deadline). Drafts only: nothing is announced.
 * @throws DaguError `unauthorized` below `manager` (dagu-model §9), `invalid_request` (field `document`) when
 *   the document is not OpenAPI 3, or (field `upstream`) for an unknown upstream
 */
export async function importOperations(
  bus: BusClient,
  principal: Principal,
  input: Request<'operation.import'>,
): Promise<Reply<'operation.import'>> {
  requireOpRole(principal, 'operation.import');
  return bus.call('agent', agentOps, 'operation.import', input, { principal });
}

/**
 * The tool a `rest_operation` binding publishes (`operation.tool`): the bound published version, or the newest published one for
 * `latest`; a draft is never served. The gateway's agent catalogs ask it as
 * its system principal (a viewer).
 * @throws DaguError `resource_not_found` when the operation has no such published version
 */
export async function getOperationTool(
  bus: BusClient,
  principal: Principal,
  input: Request<'operation.tool'>,
): Promise<Reply<'operation.tool'>> {
  requireOpRole(principal, 'operation.tool');
  return bus.call('agent', agentOps, 'operation.tool', input, { principal });
}

/**
 * One `tools/call` of a REST tool (`operation.call`):
 * agent-service validates the arguments, calls the upstream with its
 * credential through the SSRF guard and answers the MCP tool result (an
 * upstream failure is a result with `isError`, not a throw). Only the
 * arguments travel: never the caller's own key or token.
 * @param options.timeoutMs - the call's deadline; default the op's (250 s); give the tool's `callTimeoutMs`
 * @throws DaguError `unauthorized` below `operator` (dagu-model §9: it acts on another system, as a run does),
 *   `invalid_tool_input` (field = the argument) for arguments that do not fit, `resource_not_found` when the
 *   version is no longer published, `resource_unavailable` past the deadline
 */
export async function callOperation(
  bus: BusClient,
  principal: Principal,
  input: Request<'operation.call'>,
  options: { timeoutMs?: number } = {},
): Promise<Reply<'operation.call'>> {
  requireOpRole(principal, 'operation.call');
  return bus.call('agent', agentOps, 'operation.call', input, {
    principal,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
}
