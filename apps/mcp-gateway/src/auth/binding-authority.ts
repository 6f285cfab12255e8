import { RoleSchema, type Role } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import type { AuthMode } from './authenticator';
import type { UserRepository } from './user.repository';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The current role of whoever configured an agent binding (an agent can never do more than the person who configured it may), looked
 * up on every call so a demotion or deletion takes effect at once:
 * - `user:<uuid>` (builtin mode) → the user's role now; a deleted user → none;
 * - `api_key:<uuid>` → the key's role while it is live (not revoked, not expired);
 * - `AUTH_MODE=none`, and the one `basic` user → `admin` (they act as admin);
 * - anything else → none.
 *
 * @returns the role, or `undefined` when the author no longer holds any
 */
export class BindingAuthority {
  constructor(private readonly deps: { mode: AuthMode; users: UserRepository; pool: Pool }) {}

  async currentRoleOf(principalId: string): Promise<Role | undefined> {
    if (this.deps.mode === 'none') return 'admin';
    const colon = principalId.indexOf(':');
    const kind = principalId.slice(0, colon);
    const id = principalId.slice(colon + 1);
    if (principalId === 'anonymous') return undefined;
    if (kind === 'user') {
      if (this.deps.mode === 'basic') return 'admin';
      return UUID.test(id) ? (await this.deps.users.findById(id))?.role : undefined;
    }
    if (kind === 'api_key' && UUID.test(id)) {
      const { rows } = await this.deps.pool.query<{ role: string }>(
        `SELECT role FROM api_keys WHERE id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
        [id],
      );
      const parsed = RoleSchema.safeParse(rows[0]?.role);
      return parsed.success ? parsed.data : undefined;
    }
    return undefined;
  }
}
