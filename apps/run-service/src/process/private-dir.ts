import { chmodSync, mkdirSync, statSync } from 'node:fs';

/**
 * run-service's private directory (`RUN_PRIVATE_DIR`;
 * docs/security.md "run-service's own files"): the parent of its outage spill
 * files, its record of live step process groups and the attempts' scratch
 * directories, none of which a step may write. Created if missing, then made
 * run-service's with mode 0711: steps pass through it to the script and
 * output files given to them, but can neither list nor add entries.
 *
 * @param dir   the directory
 * @param ownUid run-service's uid (`process.getuid()`)
 * @throws Error when it cannot be created, or belongs to another user
 */
export function preparePrivateDir(dir: string, ownUid: number): void {
  mkdirSync(dir, { recursive: true, mode: 0o711 });
  const stat = statSync(dir);
  if (!stat.isDirectory()) throw new Error(`RUN_PRIVATE_DIR=${dir}: not a directory`);
  if (ownUid >= 0 && stat.uid !== ownUid)
    throw new Error(`RUN_PRIVATE_DIR=${dir}: belongs to uid ${stat.uid}, not to run-service (uid ${ownUid})`);
  chmodSync(dir, 0o711);
}
