import { z } from 'zod';
import {
  AgentSignInSchema,
  DEFAULT_AGENT_SIGN_IN,
  StoredBindingSchema,
  type Agent,
  type AgentWithTools,
  type StoredBinding,
} from '@dagu-mcp/contracts';

/** The columns every agent read selects. */
export const AGENT_COLUMNS =
  'id, workspace, slug, title, description, state, sign_in, tools, version, created_at, updated_at, created_by, updated_by';

const AgentRowSchema = z.object({
  id: z.string(),
  workspace: z.string(),
  slug: z.string(),
  title: z.string(),
  description: z.string(),
  state: z.enum(['draft', 'published', 'disabled']),
  sign_in: z.unknown(),
  tools: z.array(z.unknown()),
  version: z.number().int(),
  created_at: z.date(),
  updated_at: z.date(),
  created_by: z.string(),
  updated_by: z.string(),
});

/**
 * One `agents` row as the agent model with its catalog. A stored binding
 * that no longer parses (a kind a newer replica wrote) is left out rather
 * than failing the whole agent.
 */
export function parseAgentRow(row: unknown): AgentWithTools {
  const r = AgentRowSchema.parse(row);
  const tools: StoredBinding[] = [];
  for (const raw of r.tools) {
    const parsed = StoredBindingSchema.safeParse(raw);
    if (parsed.success) tools.push(parsed.data);
  }
  return {
    id: r.id,
    workspace: r.workspace,
    slug: r.slug,
    title: r.title,
    description: r.description,
    state: r.state,
    // A policy a newer replica wrote in a shape this one does not know reads as the default.
    signIn: AgentSignInSchema.safeParse(r.sign_in).data ?? DEFAULT_AGENT_SIGN_IN,
    version: r.version,
    toolCount: tools.length,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    createdBy: r.created_by,
    updatedBy: r.updated_by,
    tools,
  };
}

/** The agent model without its catalog. */
export function withoutTools(agent: AgentWithTools): Agent {
  const { tools: _tools, ...rest } = agent;
  return rest;
}
