import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { ROOT } from './app-config';

/** One instruction of a Dockerfile, continuation lines joined. */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** A build stage: `FROM <from> AS <name>` and its instructions. */
export interface Stage {
  readonly name: string;
  readonly from: string;
  readonly instructions: readonly Instruction[];
}

/** A parsed Dockerfile: the ARGs declared before the first FROM, and the stages. */
export interface Dockerfile {
  readonly globalArgs: Readonly<Record<string, string>>;
  readonly stages: readonly Stage[];
}

/** The path of an app's Dockerfile. */
export function dockerfilePath(app: string): string {
  return join(ROOT, 'infra', 'docker', `${app}.Dockerfile`);
}

/** Parses the Dockerfile syntax these images use (no heredocs, no parser directives besides `# syntax`). */
export function parseDockerfile(text: string): Dockerfile {
  const lines = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  const globalArgs: Record<string, string> = {};
  const stages: { name: string; from: string; instructions: Instruction[] }[] = [];
  for (const line of lines.map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = keyword.toUpperCase();
    if (upper === 'FROM') {
      const [image = '', , name] = args.split(/\s+/);
      const from = image.replace(/\$\{(\w+)\}/g, (_, arg: string) => globalArgs[arg] ?? '');
      stages.push({ name: name ?? String(stages.length), from, instructions: [] });
    } else if (stages.length === 0 && upper === 'ARG') {
      const [name = '', value = ''] = args.split('=');
      globalArgs[name] = value;
    } else {
      const stage = stages[stages.length - 1];
      if (stage === undefined) throw new Error(`${upper} before the first FROM`);
      stage.instructions.push({ keyword: upper, args });
    }
  }
  return { globalArgs, stages };
}

/** Reads and parses an app's Dockerfile. */
export function readDockerfile(app: string): Dockerfile {
  return parseDockerfile(readFileSync(dockerfilePath(app), 'utf8'));
}

/**
 * A `.dockerignore` as a predicate over context-relative paths (`**`, `*`,
 * `?`; a matched directory excludes its content).
 * @throws Error for `!` exceptions, which this matcher does not implement
 */
export function dockerignoreMatcher(text: string): (path: string) => boolean {
  const patterns = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  if (patterns.some((p) => p.startsWith('!')))
    throw new Error('.dockerignore exceptions (!) are not supported by this matcher');
  const regexes = patterns.map((pattern) => {
    const body = pattern
      .replace(/^\/+|\/+$/g, '')
      .split(/(\*\*\/|\*\*|\*|\?)/)
      .map(
        (part) =>
          ({ '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*', '?': '[^/]' })[part] ??
          part.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
      )
      .join('');
    return new RegExp(`^${body}(?:/.*)?$`);
  });
  return (path) => regexes.some((regex) => regex.test(path));
}

/** Copies the build context (the repository minus `.dockerignore`) to `dest`. */
function copyContext(dest: string): void {
  const ignored = dockerignoreMatcher(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));
  cpSync(ROOT, dest, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (src) => src === ROOT || !ignored(relative(ROOT, src).split('\\').join('/')),
  });
}

/** What the image's final stage would run: its files, environment, user, command and healthcheck. */
export interface SimulatedImage {
  /** The final stage's filesystem root (a directory). */
  readonly root: string;
  readonly workdir: string;
  readonly env: Readonly<Record<string, string>>;
  readonly user: string | undefined;
  readonly cmd: readonly string[];
  readonly healthcheck: readonly string[];
}

/**
 * Runs an app's Dockerfile without a Docker engine, in `workdir`: each stage
 * is a directory, COPY copies between the context and those directories, RUN
 * runs with the stage's WORKDIR as its current directory (hence the
 * Dockerfiles' rule: relative paths only in RUN). `npm install --global
 * pnpm@X turbo@Y` becomes `npx -y` shims of exactly those versions. The final
 * stage is not run: its metadata is returned for {@link runSimulatedImage}.
 *
 * @throws Error with the failing step's output
 */
export function simulateImageBuild(app: string, workdir: string): SimulatedImage {
  const dockerfile = readDockerfile(app);
  const context = join(workdir, 'context');
  copyContext(context);
  const shims = join(workdir, 'bin');
  mkdirSync(shims, { recursive: true });
  const stages = new Map<string, { root: string; env: Record<string, string> }>();
  let last: SimulatedImage | undefined;
  for (const stage of dockerfile.stages) {
    const root = join(workdir, 'stages', stage.name);
    const parent = stages.get(stage.from);
    if (parent !== undefined) cpSync(parent.root, root, { recursive: true, verbatimSymlinks: true });
    mkdirSync(root, { recursive: true });
    const env: Record<string, string> = { ...(parent?.env ?? {}) };
    let cwd = '/';
    let user: string | undefined;
    let cmd: string[] = [];
    let healthcheck: string[] = [];
    for (const { keyword, args } of stage.instructions) {
      if (keyword === 'ENV') {
        for (const [, key = '', value = ''] of args.matchAll(/(\w+)=(\S+)/g)) env[key] = value;
      } else if (keyword === 'WORKDIR') {
        cwd = args.startsWith('/') ? args : join(cwd, args);
        mkdirSync(join(root, cwd), { recursive: true });
      } else if (keyword === 'COPY') {
        const words = args.split(/\s+/);
        const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
        const paths = words.filter((w) => !w.startsWith('--'));
        const dest = paths.pop() ?? '.';
        const source = from === undefined ? context : stages.get(from)?.root;
        if (source === undefined) throw new Error(`${app}: COPY --from=${String(from)}: no such stage`);
        const target = join(root, dest.startsWith('/') ? dest : join(cwd, dest));
        for (const path of paths) {
          const src = join(source, path);
          if (statSync(src).isDirectory()) cpSync(src, target, { recursive: true, verbatimSymlinks: true });
          else
            cpSync(
              src,
              dest.endsWith('/') || dest === '.' || existsSync(target) ? join(target, basename(src)) : target,
            );
        }
      } else if (keyword === 'RUN') {
        runStep(app, args, join(root, cwd), env, shims);
      } else if (keyword === 'USER') {
        user = args;
      } else if (keyword === 'CMD') {
        cmd = jsonArray(args);
      } else if (keyword === 'HEALTHCHECK') {
        healthcheck = jsonArray(args.slice(args.indexOf('CMD ') + 4));
      }
    }
    stages.set(stage.name, { root, env });
    last = { root, workdir: cwd, env, user, cmd, healthcheck };
  }
  if (last === undefined) throw new Error(`${app}: no stage`);
  return last;
}

function jsonArray(text: string): string[] {
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string'))
    throw new Error(`not a JSON array of strings: ${text}`);
  return parsed;
}

function runStep(app: string, command: string, cwd: string, env: Record<string, string>, shims: string): void {
  const install = /^npm install --global (.+)$/.exec(command);
  if (install !== null) {
    for (const spec of (install[1] ?? '').split(/\s+/)) {
      const [, name = '', version = ''] = /^(@?[^@]+)@(.+)$/.exec(spec) ?? [];
      writeFileSync(join(shims, name), `#!/bin/sh\nexec npx -y ${name}@${version} "$@"\n`, { mode: 0o755 });
    }
    return;
  }
  if (/(^|\s)\//.test(command))
    throw new Error(`${app}: RUN uses an absolute path, which the simulation cannot map: ${command}`);
  const result = spawnSync('sh', ['-c', command], {
    cwd,
    encoding: 'utf8',
    env: { PATH: `${shims}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? '/root', CI: 'true', ...env },
    timeout: 300_000,
  });
  if (result.status !== 0)
    throw new Error(`${app}: RUN ${command} failed (${String(result.status)}):\n${result.stdout}\n${result.stderr}`);
}

/** Makes `dir` and its parents up to `/tmp` traversable by the image's non-root user. */
export function openPath(dir: string): void {
  for (let d = dir; d.length > 1 && d !== '/tmp'; d = join(d, '..')) chmodSync(d, statSync(d).mode | 0o755);
}

/**
 * Starts the simulated image's CMD in its WORKDIR with its ENV plus `env`, as
 * its USER when this process may switch users (root), and resolves once its
 * HEALTHCHECK command passes.
 *
 * @returns the process and its output so far
 * @throws Error when the process exits or the healthcheck does not pass in `timeoutMs`
 */
export async function runSimulatedImage(
  image: SimulatedImage,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ child: ReturnType<typeof spawn>; output: () => string }> {
  const cwd = join(image.root, image.workdir);
  const [uid, gid] = (image.user ?? '').split(':').map(Number);
  const asUser = process.getuid?.() === 0 && uid !== undefined && !Number.isNaN(uid) ? { uid, gid: gid ?? uid } : {};
  const fullEnv = { PATH: process.env.PATH ?? '', ...image.env, ...env };
  const [command = 'node', ...args] = image.cmd;
  const child = spawn(command, args, { cwd, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'], ...asUser });
  const chunks: string[] = [];
  child.stdout?.on('data', (d: Buffer) => chunks.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => chunks.push(d.toString()));
  const output = (): string => chunks.join('');
  const [check = 'node', ...checkArgs] = image.healthcheck;
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`the image's CMD exited with ${child.exitCode}:\n${output()}`);
    if (spawnSync(check, checkArgs, { cwd, env: fullEnv, timeout: 5000, ...asUser }).status === 0)
      return { child, output };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  child.kill('SIGTERM');
  throw new Error(`the image's HEALTHCHECK did not pass within ${timeoutMs} ms:\n${output()}`);
}

/** Names of the packages installed at the top of `dir/node_modules` (scoped ones as `@scope/name`). */
export function installedPackages(dir: string): string[] {
  const modules = join(dir, 'node_modules');
  if (!existsSync(modules)) return [];
  return readdirSync(modules)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) =>
      name.startsWith('@') ? readdirSync(join(modules, name)).map((sub) => `${name}/${sub}`) : [name],
    );
}
