import { z } from 'zod';

/** Roles from highest to lowest (dagu-model §9). */
export const RoleSchema = z.enum(['admin', 'manager', 'developer', 'operator', 'viewer']);
export type Role = z.infer<typeof RoleSchema>;

const ROLE_RANK: Record<Role, number> = { admin: 5, manager: 4, developer: 3, operator: 2, viewer: 1 };

/** True when `role` is `required` or above it (dagu-model §9). */
export function roleAtLeast(role: Role, required: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[required];
}

/** How the caller proved who it is (dagu-model §8 audit `credential type`). */
export const CredentialTypeSchema = z.enum(['none', 'basic', 'api_key', 'token', 'oauth', 'session']);
export type CredentialType = z.infer<typeof CredentialTypeSchema>;

/**
 * The authenticated caller, as it travels in every bus request. Never carries
 * a secret: only ids, a display subject and the role.
 */
export const PrincipalSchema = z.object({
  id: z.string().min(1),
  subject: z.string().min(1),
  role: RoleSchema,
  credentialType: CredentialTypeSchema,
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
