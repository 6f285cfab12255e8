import { z } from 'zod';
import { AgentSlugSchema, DaguError, isValidWikiWorkspace } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { Pool } from '@dagu-mcp/runtime';
import { getAgent } from '../actions/agent.actions';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';
import { queryToolUsage, type ToolUsage } from '../usage/tool-call.repository';
import { parseRequest } from './parse-body';

const UsageQuerySchema = z.strictObject({
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
});

/** Default window: the last 24 hours. Longest window: 93 days. */
const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_WINDOW_MS = 93 * DAY_MS;

/** What the usage route needs. */
export interface AgentUsageRouteDeps {
  readonly bus: BusClient;
  readonly pool: Pool;
  /** Writes this replica's buffered calls first, so a read right after a call sees it here. */
  readonly flush: () => Promise<void>;
}

/**
 * `GET /api/v1/workspaces/{ws}/agents/{agent}/usage?from=&to=`, `manager` and up: per tool of the agent, the calls on its endpoint
 * in `[from, to)` (ISO 8601; default the last 24 h), how many were errors,
 * and latency percentiles in ms (`null` without calls). Every tool of the
 * current catalog is listed, then tools no longer in it that have calls.
 * Answer: `{from, to, tools: [{tool, calls, errors, p50Ms, p95Ms, p99Ms}]}`.
 */
export function agentUsageRoutes(deps: AgentUsageRouteDeps): RestRoutes {
  return (routes) => {
    routes.get(
      '/workspaces/:ws/agents/:agent/usage',
      {
        action: 'usage.agent',
        summary: 'Calls, errors and latency percentiles per tool of an agent over a window',
        tag: 'agents',
        query: UsageQuerySchema,
      },
      async (req, res) => {
        const workspace = String(req.params.ws);
        if (workspace === 'all' || !isValidWikiWorkspace(workspace))
          throw new DaguError('invalid_request', `Not a valid workspace name: ${workspace}.`, { field: 'workspace' });
        const slug = AgentSlugSchema.safeParse(String(req.params.agent));
        if (!slug.success) throw new DaguError('invalid_request', 'agent: not a valid agent slug', { field: 'agent' });
        const query = parseRequest(UsageQuerySchema, req.query);
        const to = query.to !== undefined ? new Date(query.to) : new Date();
        const from = query.from !== undefined ? new Date(query.from) : new Date(to.getTime() - DAY_MS);
        if (from.getTime() >= to.getTime())
          throw new DaguError('invalid_request', 'from: must be before to', { field: 'from' });
        if (to.getTime() - from.getTime() > MAX_WINDOW_MS)
          throw new DaguError('invalid_request', 'from: the window may be at most 93 days', { field: 'from' });
        const agent = await getAgent(deps.bus, principalOf(res), { workspace, slug: slug.data });
        await deps.flush();
        const used = new Map((await queryToolUsage(deps.pool, agent.id, from, to)).map((u) => [u.tool, u]));
        const tools: ToolUsage[] = agent.tools.map(
          (b) =>
            used.get(b.toolName) ?? { tool: b.toolName, calls: 0, errors: 0, p50Ms: null, p95Ms: null, p99Ms: null },
        );
        const listed = new Set(tools.map((t) => t.tool));
        for (const [tool, usage] of used) if (!listed.has(tool)) tools.push(usage);
        res.json({ from: from.toISOString(), to: to.toISOString(), tools });
      },
    );
  };
}
