import { DaguError } from '@dagu-mcp/contracts';
import { ConfigError, openSecretBox, type Logger, type SecretBox } from '@dagu-mcp/runtime';

/** Gives the secrets-at-rest key ring (`DAGU_ENCRYPTION_KEY`) when a secret is written or used. */
export type SecretSource = () => SecretBox;

/**
 * True when a PostgreSQL URL names this host (`localhost`, `::1`, `127.x`): the mark of a
 * developer machine, where an unset `DAGU_ENCRYPTION_KEY` means a development key file
 * (docs/decisions.md). An unparsable URL is not loopback.
 */
export function isLoopbackDatabase(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || host.startsWith('127.');
  } catch {
    return false;
  }
}

/**
 * Opens the key ring (runtime `openSecretBox`) on first use, not at start: a service without
 * `DAGU_ENCRYPTION_KEY` keeps serving everything else, and only writing or using a secret fails.
 * Used by run-service (runtime profiles' secret values, Dagu spec 022b) and agent-service
 * (upstream credentials).
 *
 * @param opts.keyRing  `DAGU_ENCRYPTION_KEY`; unset is a development key file when `loopback`
 * @param opts.secrets  what the secrets are, for the log and the error (`profile secrets`)
 * @param opts.unavailable  the error's opening words (`Secret profile values are unavailable on run-service`)
 * @throws DaguError `resource_unavailable` (from the returned function) naming why the ring cannot be opened
 */
export function createSecretSource(opts: {
  keyRing: string | undefined;
  loopback: boolean;
  logger: Logger;
  secrets: string;
  unavailable: string;
}): SecretSource {
  let box: SecretBox | undefined;
  return () => {
    if (box !== undefined) return box;
    try {
      const opened = openSecretBox({ keyRing: opts.keyRing, loopback: opts.loopback });
      if (opened.devKeyFile !== undefined)
        opts.logger.warn(
          { file: opened.devKeyFile },
          `DAGU_ENCRYPTION_KEY unset: ${opts.secrets} use a development key`,
        );
      box = opened.box;
      return box;
    } catch (error) {
      const reason = error instanceof ConfigError ? error.message : 'the key ring cannot be opened';
      throw new DaguError('resource_unavailable', `${opts.unavailable}: ${reason}`);
    }
  };
}
