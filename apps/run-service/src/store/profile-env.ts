import { DaguError } from '@dagu-mcp/contracts';
import { ConfigError, openSecretBox, type Logger, type Pool, type SecretBox } from '@dagu-mcp/runtime';
import { findProfile } from './profile.repository';

/** The SecretBox purpose of one secret variable: a ciphertext moved to another variable or profile does not open. */
export function secretPurpose(workspace: string, profile: string, variable: string): string {
  return `run.profile:${workspace}/${profile}/${variable}`;
}

/** Gives the key ring when a secret is written or read (`DAGU_ENCRYPTION_KEY`). */
export type SecretSource = () => SecretBox;

/**
 * Opens the secrets-at-rest key ring on first use, not at start: a
 * run-service without `DAGU_ENCRYPTION_KEY` keeps running every DAG, and only
 * writing or using a secret profile value fails (`resource_unavailable`, the
 * message says which variable to set). Unset is a development key file
 * (runtime `openSecretBox`) when `loopback` — run-service's PostgreSQL is on
 * this host, the mark of a developer machine (docs/decisions.md, issue 19).
 */
export function createSecretSource(opts: {
  keyRing: string | undefined;
  loopback: boolean;
  logger: Logger;
}): SecretSource {
  let box: SecretBox | undefined;
  return () => {
    if (box !== undefined) return box;
    try {
      const opened = openSecretBox({ keyRing: opts.keyRing, loopback: opts.loopback });
      if (opened.devKeyFile !== undefined)
        opts.logger.warn(
          { file: opened.devKeyFile },
          'DAGU_ENCRYPTION_KEY unset: profile secrets use a development key',
        );
      box = opened.box;
      return box;
    } catch (error) {
      const reason = error instanceof ConfigError ? error.message : 'the key ring cannot be opened';
      throw new DaguError('resource_unavailable', `Secret profile values are unavailable on run-service: ${reason}`);
    }
  };
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
