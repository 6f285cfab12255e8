import { constants } from 'node:fs';
import { chmod, copyFile, cp, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ActionError, type ActionOutput, type WithMap } from './action-types';
import { globToRegExp } from './glob';

/**
 * The `file.*` actions (dagu-actions §1.8), run in the helper process as the
 * step's uid in its working directory: relative paths resolve against it,
 * `~` is the step's `HOME`; no sandbox beyond what that uid may touch (so a
 * run cannot reach another run's directory: its uid has no access). JSON
 * output keys: `path, type, size, mode, modified, content, exists` (the
 * spec's project choice); `mode` is an octal string (`0644`), `modified` ISO
 * 8601, `type` `file` / `directory` / `symlink` / `other`.
 *
 * Error texts (substrings the spec promises): `file exists`,
 * `exceeds max_bytes`, `cannot read a directory`, `recursive is required to
 * <copy|move|delete> a directory`, `destination must not be inside source`,
 * `destination exists`.
 */

function pathOf(value: unknown, key: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ActionError(`with.${key} must be a non-empty string`);
  const home = process.env.HOME ?? homedir();
  const expanded = value === '~' ? home : value.startsWith('~/') ? join(home, value.slice(2)) : value;
  return isAbsolute(expanded) ? expanded : resolve(process.cwd(), expanded);
}

const flag = (w: WithMap, key: string, fallback = false): boolean =>
  w[key] === undefined || w[key] === null ? fallback : w[key] === true || w[key] === 'true';

function typeOf(info: Stats): string {
  if (info.isSymbolicLink()) return 'symlink';
  if (info.isDirectory()) return 'directory';
  if (info.isFile()) return 'file';
  return 'other';
}

function meta(path: string, info: Stats): Record<string, unknown> {
  return {
    path,
    type: typeOf(info),
    size: info.size,
    mode: `0${(info.mode & 0o7777).toString(8).padStart(3, '0')}`,
    modified: info.mtime.toISOString(),
  };
}

async function statOrUndefined(path: string, follow: boolean): Promise<Stats | undefined> {
  try {
    return follow ? await stat(path) : await lstat(path);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return undefined;
    throw error;
  }
}

function parseMode(value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : JSON.stringify(value);
  if (!/^0?[0-7]{3,4}$/.test(text))
    throw new ActionError(`with.mode must be an octal string such as 0644 (got ${text})`);
  return parseInt(text, 8);
}

const json = (value: unknown): ActionOutput => ({ stdout: `${JSON.stringify(value)}\n` });

async function fileWrite(w: WithMap): Promise<ActionOutput> {
  const path = pathOf(w.path, 'path');
  const content = typeof w.content === 'string' ? w.content : JSON.stringify(w.content);
  const mode = parseMode(w.mode, 0o600);
  const existing = await statOrUndefined(path, true);
  if (existing?.isDirectory()) throw new ActionError(`${path}: is a directory`);
  if (existing !== undefined && !flag(w, 'overwrite'))
    throw new ActionError(`${path}: file exists (set overwrite: true)`);
  const result = { path, size: Buffer.byteLength(content), created: existing === undefined };
  if (flag(w, 'dry_run')) return json({ ...result, created: false, dry_run: true });
  if (flag(w, 'create_dirs')) await mkdir(dirname(path), { recursive: true });
  if (flag(w, 'atomic', true)) {
    const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
    await writeFile(temp, content, { mode });
    await chmod(temp, mode);
    await rename(temp, path);
  } else {
    await writeFile(path, content, { mode });
    await chmod(path, mode);
  }
  return json(result);
}

async function fileRead(w: WithMap): Promise<ActionOutput> {
  const path = pathOf(w.path, 'path');
  const info = await stat(path);
  if (info.isDirectory()) throw new ActionError(`${path}: cannot read a directory`);
  const max = typeof w.max_bytes === 'number' ? w.max_bytes : Number(w.max_bytes ?? 0);
  if (max > 0 && info.size > max) throw new ActionError(`${path}: ${info.size} bytes exceeds max_bytes ${max}`);
  const bytes = await readFile(path);
  if ((w.format ?? 'raw') === 'json') return json({ ...meta(path, info), content: bytes.toString('utf8') });
  return { stdout: bytes };
}

async function fileStat(w: WithMap): Promise<ActionOutput> {
  const path = pathOf(w.path, 'path');
  const info = await statOrUndefined(path, flag(w, 'follow_symlinks'));
  if (info === undefined) {
    if (flag(w, 'missing_ok')) return json({ path, exists: false });
    throw new ActionError(`${path}: no such file or directory`);
  }
  return json({ exists: true, ...meta(path, info) });
}

async function copyOrMove(w: WithMap, verb: 'copy' | 'move'): Promise<ActionOutput> {
  const source = pathOf(w.source, 'source');
  const destination = pathOf(w.destination, 'destination');
  if (source === destination) throw new ActionError('with.destination must differ from with.source');
  const info = await lstat(source);
  if (info.isDirectory()) {
    if (!flag(w, 'recursive')) throw new ActionError(`${source}: recursive is required to ${verb} a directory`);
    if (destination.startsWith(`${source}${sep}`)) throw new ActionError('destination must not be inside source');
  }
  const existing = await statOrUndefined(destination, false);
  if (existing !== undefined && !flag(w, 'overwrite')) throw new ActionError(`${destination}: destination exists`);
  const result = { source, destination, type: typeOf(info) };
  if (flag(w, 'dry_run')) return json({ ...result, [verb === 'copy' ? 'copied' : 'moved']: false, dry_run: true });
  if (flag(w, 'create_dirs')) await mkdir(dirname(destination), { recursive: true });
  if (existing !== undefined) await rm(destination, { recursive: true, force: true });
  if (verb === 'move') await rename(source, destination);
  else if (info.isDirectory()) await cp(source, destination, { recursive: true, verbatimSymlinks: true });
  else await copyFile(source, destination, constants.COPYFILE_EXCL);
  return json({ ...result, [verb === 'copy' ? 'copied' : 'moved']: true });
}

async function fileDelete(w: WithMap): Promise<ActionOutput> {
  const path = pathOf(w.path, 'path');
  if (resolve(path) === '/') throw new ActionError('refusing to delete /');
  const info = await statOrUndefined(path, false);
  if (info === undefined) {
    if (flag(w, 'missing_ok')) return json({ path, deleted: false });
    throw new ActionError(`${path}: no such file or directory`);
  }
  if (info.isDirectory() && !flag(w, 'recursive'))
    throw new ActionError(`${path}: recursive is required to delete a directory`);
  if (flag(w, 'dry_run')) return json({ path, deleted: false, dry_run: true });
  await rm(path, { recursive: info.isDirectory() });
  return json({ path, deleted: true });
}

async function fileMkdir(w: WithMap): Promise<ActionOutput> {
  const path = pathOf(w.path, 'path');
  const existed = (await statOrUndefined(path, true)) !== undefined;
  await mkdir(path, { recursive: true, mode: parseMode(w.mode, 0o755) });
  return json({ path, created: !existed });
}

async function fileList(w: WithMap): Promise<ActionOutput> {
  const root = pathOf(w.path, 'path');
  const pattern = typeof w.pattern === 'string' && w.pattern !== '' ? globToRegExp(w.pattern) : undefined;
  const recursive = flag(w, 'recursive');
  const includeDirs = flag(w, 'include_dirs');
  const entries: Record<string, unknown>[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const name of await readdir(dir)) {
      const full = join(dir, name);
      const info = flag(w, 'follow_symlinks') ? await stat(full) : await lstat(full);
      const rel = relative(root, full).split(sep).join('/');
      const isDir = info.isDirectory();
      if ((!isDir || includeDirs) && (pattern === undefined || pattern.test(rel))) entries.push({ ...meta(rel, info) });
      if (isDir && recursive) await walk(full);
    }
  };
  if (!(await stat(root)).isDirectory()) throw new ActionError(`${root}: not a directory`);
  await walk(root);
  entries.sort((a, b) => (String(a.path) < String(b.path) ? -1 : String(a.path) > String(b.path) ? 1 : 0));
  return json({ path: root, count: entries.length, entries });
}

/** Runs `file.<verb>`. @throws ActionError (or a Node file-system error) with the message that fails the step */
export function runFileAction(action: string, w: WithMap): Promise<ActionOutput> {
  switch (action) {
    case 'file.write':
      return fileWrite(w);
    case 'file.read':
      return fileRead(w);
    case 'file.stat':
      return fileStat(w);
    case 'file.copy':
      return copyOrMove(w, 'copy');
    case 'file.move':
      return copyOrMove(w, 'move');
    case 'file.delete':
      return fileDelete(w);
    case 'file.mkdir':
      return fileMkdir(w);
    case 'file.list':
      return fileList(w);
    default:
      throw new ActionError(`unknown file action ${action}`);
  }
}
