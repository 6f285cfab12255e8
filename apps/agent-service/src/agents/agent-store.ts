import { randomUUID } from 'node:crypto';
import {
  DaguError,
  DEFAULT_AGENT_SIGN_IN,
  requireMutationRole,
  type Agent,
  type AgentCreateRequest,
  type AgentRef,
  type AgentSetToolsRequest,
  type AgentUpdateRequest,
  type AgentWithTools,
  type Principal,
} from '@dagu-mcp/contracts';
import { recordMutation, type MutationAuthor, type Pool, type PoolClient } from '@dagu-mcp/runtime';
import { fenceOf } from '@dagu-mcp/service-kit';
import { mutate, withStorageErrors } from '../db/storage-errors';
import { AGENT_COLUMNS, parseAgentRow, withoutTools } from './agent.records';
import { mergeCatalog } from './catalog';

/**
 * Agents and their catalogs in agent-service's schema.
 * Every write is one transaction that commits only before the request's
 * deadline and records the change with its author (mutation record, audit
 * outbox); writes need `manager` or higher (dagu-model §9),
 * checked here whoever sent the request.
 */

/** Who writes, and until when (epoch ms): the bus handler context. */
export type WriteContext = MutationAuthor & { readonly deadline: number };

const notFound = (ref: AgentRef): DaguError =>
  new DaguError('resource_not_found', `No agent ${ref.slug} in workspace ${ref.workspace}.`, { field: 'agent' });

/** The agent's audit target. */
const targetOf = (ref: AgentRef): string => `agent:${ref.workspace}/${ref.slug}`;

async function write<T>(pool: Pool, ctx: WriteContext, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return mutate(pool, fenceOf(ctx), (client) => fn(client));
}

/** The agents of a workspace, by slug (none: an empty list). */
export async function listAgents(pool: Pool, workspace: string): Promise<Agent[]> {
  const { rows } = await withStorageErrors(() =>
    pool.query(`SELECT ${AGENT_COLUMNS} FROM agents WHERE workspace = $1 ORDER BY slug`, [workspace]),
  );
  return rows.map((row) => withoutTools(parseAgentRow(row)));
}

/**
 * One agent with its catalog, whatever its state.
 *
 * @throws DaguError `resource_not_found` (field `agent`) for an unknown workspace or slug
 */
export async function getAgent(pool: Pool, ref: AgentRef): Promise<AgentWithTools> {
  const { rows } = await withStorageErrors(() =>
    pool.query(`SELECT ${AGENT_COLUMNS} FROM agents WHERE workspace = $1 AND slug = $2`, [ref.workspace, ref.slug]),
  );
  if (rows[0] === undefined) throw notFound(ref);
  return parseAgentRow(rows[0]);
}

/**
 * Creates an agent with an empty catalog.
 *
 * @throws DaguError `conflict` (field `slug`) when the workspace has an agent of that slug; `unauthorized` below manager
 */
export async function createAgent(pool: Pool, input: AgentCreateRequest, ctx: WriteContext): Promise<Agent> {
  requireMutationRole(ctx.principal, 'agent.create');
  return write(pool, ctx, async (client) => {
    const { rows } = await client.query(
      `INSERT INTO agents (id, workspace, slug, title, description, state, sign_in, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $8::jsonb, $7, $7)
       ON CONFLICT (workspace, slug) DO NOTHING RETURNING ${AGENT_COLUMNS}`,
      [
        randomUUID(),
        input.workspace,
        input.slug,
        input.title,
        input.description,
        input.state,
        ctx.principal.subject,
        JSON.stringify(input.signIn ?? DEFAULT_AGENT_SIGN_IN),
      ],
    );
    if (rows[0] === undefined) {
      throw new DaguError('conflict', `Workspace ${input.workspace} already has an agent ${input.slug}.`, {
        field: 'slug',
      });
    }
    const agent = withoutTools(parseAgentRow(rows[0]));
    await recordMutation(client, ctx, {
      action: 'agent.created',
      target: targetOf(input),
      details: { state: agent.state },
    });
    return agent;
  });
}

/**
 * Changes title, description, state or sign-in policy (absent fields stay); the version grows.
 *
 * @throws DaguError `resource_not_found`; `unauthorized` below manager
 */
export async function updateAgent(pool: Pool, input: AgentUpdateRequest, ctx: WriteContext): Promise<Agent> {
  requireMutationRole(ctx.principal, 'agent.update');
  return write(pool, ctx, async (client) => {
    const { rows } = await client.query(
      `UPDATE agents SET title = COALESCE($3, title), description = COALESCE($4, description),
              state = COALESCE($5, state), sign_in = COALESCE($7::jsonb, sign_in),
              version = version + 1, updated_at = now(), updated_by = $6
        WHERE workspace = $1 AND slug = $2 RETURNING ${AGENT_COLUMNS}`,
      [
        input.workspace,
        input.slug,
        input.title ?? null,
        input.description ?? null,
        input.state ?? null,
        ctx.principal.subject,
        input.signIn === undefined ? null : JSON.stringify(input.signIn),
      ],
    );
    if (rows[0] === undefined) throw notFound(input);
    const agent = withoutTools(parseAgentRow(rows[0]));
    await recordMutation(client, ctx, {
      action: 'agent.updated',
      target: targetOf(input),
      details: { state: agent.state, version: agent.version, signIn: agent.signIn.mode },
    });
    return agent;
  });
}

/**
 * Deletes an agent and its catalog.
 *
 * @throws DaguError `resource_not_found`; `unauthorized` below manager
 */
export async function deleteAgent(
  pool: Pool,
  ref: AgentRef,
  ctx: WriteContext,
): Promise<{ id: string; deleted: true }> {
  requireMutationRole(ctx.principal, 'agent.delete');
  return write(pool, ctx, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      'DELETE FROM agents WHERE workspace = $1 AND slug = $2 RETURNING id',
      [ref.workspace, ref.slug],
    );
    const id = rows[0]?.id;
    if (id === undefined) throw notFound(ref);
    await recordMutation(client, ctx, { action: 'agent.deleted', target: targetOf(ref), details: { id } });
    return { id, deleted: true as const };
  });
}

/**
 * Replaces an agent's catalog ({@link mergeCatalog}: tool names unique, the
 * authors of unchanged bindings kept); the version grows. With `ifVersion`, only while the
 * agent's version is that one (docs/decisions.md "Admin APIs that round-trip").
 *
 * @throws DaguError `resource_not_found`; `conflict` for a tool-name collision or another version
 *   than `ifVersion` (field `ifVersion`); `unauthorized` below manager
 */
export async function setAgentTools(
  pool: Pool,
  input: AgentSetToolsRequest,
  ctx: WriteContext,
): Promise<AgentWithTools> {
  requireMutationRole(ctx.principal, 'agent.setTools');
  return write(pool, ctx, async (client) => {
    const { rows } = await client.query(
      `SELECT ${AGENT_COLUMNS} FROM agents WHERE workspace = $1 AND slug = $2 FOR UPDATE`,
      [input.workspace, input.slug],
    );
    if (rows[0] === undefined) throw notFound(input);
    const current = parseAgentRow(rows[0]);
    if (input.ifVersion !== undefined && input.ifVersion !== current.version)
      throw new DaguError(
        'conflict',
        `The agent changed meanwhile (version ${current.version}, not ${input.ifVersion}); read it again.`,
        { field: 'ifVersion', details: { version: current.version } },
      );
    const tools = mergeCatalog(current.tools, input.tools, authorOf(ctx.principal), new Date().toISOString());
    const updated = await client.query(
      `UPDATE agents SET tools = $2::jsonb, version = version + 1, updated_at = now(), updated_by = $3
        WHERE id = $1 RETURNING ${AGENT_COLUMNS}`,
      [current.id, JSON.stringify(tools), ctx.principal.subject],
    );
    const agent = parseAgentRow(updated.rows[0]);
    await recordMutation(client, ctx, {
      action: 'agent.tools_set',
      target: targetOf(input),
      details: { tools: tools.map((t) => t.toolName), version: agent.version },
    });
    return agent;
  });
}

function authorOf(principal: Principal): { id: string; subject: string } {
  return { id: principal.id, subject: principal.subject };
}
