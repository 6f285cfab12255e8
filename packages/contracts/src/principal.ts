import { z } from 'zod';

/** Roles from highest to lowest (dagu-model §9). */
export const RoleSchema = z.enum(['admin', 'manager', 'developer', 'operator', 'viewer']);
export type Role = z.infer<typeof RoleSchema>;

const ROLE_RANK: Record<Role, number> = { admin: 5, manager: 4, developer: 3, operator: 2, viewer: 1 };

/** The lower of two roles (dagu-model §9 order): an authority narrowed by another. */
export function lowerRole(a: Role, b: Role): Role {
  return ROLE_RANK[a] <= ROLE_RANK[b] ? a : b;
}

/** True when `role` is `required` or above it (dagu-model §9). */
export function roleAtLeast(role: Role, required: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[required];
}

/** How the caller proved who it is (dagu-model §8 audit `credential type`). */
export const CredentialTypeSchema = z.enum(['none', 'basic', 'api_key', 'token', 'oauth', 'session', 'agent_key']);
export type CredentialType = z.infer<typeof CredentialTypeSchema>;

/**
 * The person a published agent acts for: present when someone signed in
 * with OAuth on the agent's endpoint; `id` is the user's id, `name` their username.
 */
export const OnBehalfOfSchema = z.object({
  kind: z.literal('user'),
  id: z.string().min(1),
  name: z.string().min(1),
});
export type OnBehalfOf = z.infer<typeof OnBehalfOfSchema>;

/**
 * The authenticated caller, as it travels in every bus request. Never carries
 * a secret: only ids, a display subject, the role and, for an OAuth access
 * token, the scopes it holds now. `onBehalfOf` names the person behind an agent
 * principal that a person signed in to.
 */
export const PrincipalSchema = z.object({
  id: z.string().min(1),
  subject: z.string().min(1),
  role: RoleSchema,
  credentialType: CredentialTypeSchema,
  onBehalfOf: OnBehalfOfSchema.optional(),
  /**
   * An OAuth access token's scopes as held now (already capped by the role): the gateway's MCP layer narrows what the caller is offered and may call by
   * them. Absent: the credential is not scoped (its role alone decides). Services decide
   * by role and need not read it.
   */
  scopes: z.array(z.string()).optional(),
});
export type Principal = z.infer<typeof PrincipalSchema>;

/** The principal used while authentication is off (`AUTH_MODE=none`): acts as admin. */
export const ANONYMOUS_PRINCIPAL: Principal = Object.freeze({
  id: 'anonymous',
  subject: 'anonymous',
  role: 'admin',
  credentialType: 'none',
});

/** The gateway acting on its own behalf (health probes): the lowest role, no credential. */
export const SYSTEM_PRINCIPAL: Principal = Object.freeze({
  id: 'system:mcp-gateway',
  subject: 'mcp-gateway',
  role: 'viewer',
  credentialType: 'none',
});
