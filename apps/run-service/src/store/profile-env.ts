import type { Pool } from '@dagu-mcp/runtime';
import type { SecretSource } from '@dagu-mcp/service-kit';
import { findProfile } from './profile.repository';

export type { SecretSource } from '@dagu-mcp/service-kit';

/** The SecretBox purpose of one secret variable: a ciphertext moved to another variable or profile does not open. */
export function secretPurpose(workspace: string, profile: string, variable: string): string {
  return `run.profile:${workspace}/${profile}/${variable}`;
}

/**
 * The variables of profile `name` for a run, secrets decrypted, and the
 * secret values (for masking step logs as `*****`, Dagu spec 022b). A profile
 * deleted since the run started gives no variables.
 *
 * @throws DaguError `resource_unavailable` when a secret cannot be opened
 */
export async function loadProfileEnv(
  pool: Pool,
  secrets: SecretSource,
  workspace: string,
  name: string,
): Promise<{ env: Record<string, string>; secrets: string[] }> {
  const record = await findProfile(pool, workspace, name);
  const env: Record<string, string> = {};
  const values: string[] = [];
  for (const [variable, stored] of Object.entries(record?.env ?? {})) {
    const value = stored.secret
      ? secrets().decrypt(stored.value, secretPurpose(workspace, name, variable))
      : stored.value;
    env[variable] = value;
    if (stored.secret && value !== '') values.push(value);
  }
  return { env, secrets: values };
}
