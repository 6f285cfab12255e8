import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../config/config';
import { generateKeyText, parseKeyRing, SecretBox, SecretBoxError } from './secret-box';

/**
 * Where a loopback stack keeps its generated development key (mode 0600, readable by the
 * service's own user only). One file per Unix user: the file of another user on the same
 * machine is unreadable (mode 0600), and reading it would fail the start.
 */
// process.getuid, not os.userInfo: a container's arbitrary uid may have no passwd entry.
export const DEV_KEY_FILE = join(tmpdir(), `dagu-mcp-dev-encryption-${process.getuid?.() ?? 'user'}.key`);

/** The key ring an app opened, and whether it is the generated development key. */
export interface OpenedSecretBox {
  readonly box: SecretBox;
  /** Set when no key was configured and a development key was read or generated at this path. */
  readonly devKeyFile?: string;
}

/**
 * Opens the secrets-at-rest key ring from `DAGU_ENCRYPTION_KEY` (or
 * `DAGU_ENCRYPTION_KEY_FILE`, read by `parseConfig`).
 *
 * Unset is allowed only on a loopback stack (`loopback` true: the app
 * listens on 127.0.0.0/8, ::1 or localhost): a development key is then read
 * from `devKeyFile`, or generated there once, and the caller logs that it
 * uses one. Anywhere else (production mode) the start stops.
 *
 * @throws ConfigError when the key is missing outside loopback, or malformed
 */
export function openSecretBox(opts: {
  keyRing: string | undefined;
  loopback: boolean;
  devKeyFile?: string;
}): OpenedSecretBox {
  if (opts.keyRing !== undefined) {
    try {
      return { box: new SecretBox(parseKeyRing(opts.keyRing)) };
    } catch (error) {
      const reason = error instanceof SecretBoxError ? error.message : 'unreadable';
      throw new ConfigError(`Invalid configuration: DAGU_ENCRYPTION_KEY: ${reason}`);
    }
  }
  if (!opts.loopback) {
    throw new ConfigError(
      'Invalid configuration: DAGU_ENCRYPTION_KEY (or DAGU_ENCRYPTION_KEY_FILE) is required when the service is not ' +
        'bound to a loopback address: it encrypts the secrets kept in PostgreSQL. Generate one with ' +
        '`openssl rand -base64 32` (docs/security.md).',
    );
  }
  const file = opts.devKeyFile ?? DEV_KEY_FILE;
  return { box: new SecretBox(parseKeyRing(readOrCreateDevKey(file))), devKeyFile: file };
}

function readOrCreateDevKey(file: string): string {
  try {
    writeFileSync(file, `${generateKeyText()}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process generated it first (not `instanceof`: errors of node:fs may come from another realm).
    if (!(typeof error === 'object' && error !== null && 'code' in error && error.code === 'EEXIST')) throw error;
  }
  return readFileSync(file, 'utf8').trim();
}
