import { DaguError } from '@dagu-mcp/contracts';
import { ConfigError, openSecretBox, type Logger, type SecretBox } from '@dagu-mcp/runtime';

/** Gives the key ring when an upstream credential is written or used (`DAGU_ENCRYPTION_KEY`). */
export type SecretSource = () => SecretBox;

/** True when a PostgreSQL URL points at this host: the mark of a developer machine (docs/decisions.md, issue 19). */
export function isLoopbackDatabase(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || host.startsWith('127.');
  } catch {
    return false;
  }
}

/**
 * Opens the secrets-at-rest key ring (runtime `openSecretBox`, the helper of
 * runtime profiles' secrets) on first use, not at start: agent-service without
 * `DAGU_ENCRYPTION_KEY` keeps serving agents, and only saving or using an
 * upstream credential fails (`resource_unavailable`, naming the variable).
 * Unset is a development key file when `loopback`.
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
          'DAGU_ENCRYPTION_KEY unset: upstream credentials use a development key',
        );
      box = opened.box;
      return box;
    } catch (error) {
      const reason = error instanceof ConfigError ? error.message : 'the key ring cannot be opened';
      throw new DaguError('resource_unavailable', `Upstream credentials are unavailable on agent-service: ${reason}`);
    }
  };
}
