import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { ROOT } from './app-config';

export const COMPOSE_FILE = join(ROOT, 'docker-compose.yml');

/** A compose service, normalized from either `docker compose config` output or the raw file. */
export interface ComposeService {
  readonly name: string;
  readonly image: string | undefined;
  readonly build: { context: string; dockerfile: string } | undefined;
  readonly command: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  /** Service name → condition (`service_started` for the short list form). */
  readonly dependsOn: Readonly<Record<string, string>>;
  readonly healthcheck: readonly string[] | undefined;
  readonly ports: readonly { hostIp: string; published: string; target: number }[];
  readonly volumes: readonly { source: string; target: string }[];
  readonly raw: Readonly<Record<string, unknown>>;
}

/** The resolved compose model and which tool resolved it. */
export interface ComposeModel {
  readonly resolvedBy: string;
  readonly services: Readonly<Record<string, ComposeService>>;
  readonly volumes: readonly string[];
}

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const ServiceSchema = z
  .object({
    image: z.string().optional(),
    build: z.object({ context: z.string(), dockerfile: z.string() }).loose().optional(),
    command: z.union([z.string(), z.array(z.string())]).optional(),
    environment: z.union([z.record(z.string(), scalar), z.array(z.string())]).optional(),
    depends_on: z
      .union([z.array(z.string()), z.record(z.string(), z.object({ condition: z.string() }).loose())])
      .optional(),
    healthcheck: z
      .object({ test: z.union([z.string(), z.array(z.string())]) })
      .loose()
      .optional(),
    ports: z
      .array(
        z.union([
          z.string(),
          z.object({ target: z.number(), published: scalar.optional(), host_ip: z.string().optional() }).loose(),
        ]),
      )
      .optional(),
    volumes: z
      .array(z.union([z.string(), z.object({ source: z.string().optional(), target: z.string() }).loose()]))
      .optional(),
  })
  .loose();
const ComposeSchema = z
  .object({ services: z.record(z.string(), ServiceSchema), volumes: z.record(z.string(), z.unknown()).nullish() })
  .loose();

/**
 * Compose's variable interpolation (`${NAME}`, `${NAME:-default}`,
 * `${NAME-default}`, `$NAME`, `$$`) over every string of a parsed file.
 */
export function interpolate(value: unknown, env: Readonly<Record<string, string>>): unknown {
  if (typeof value === 'string') {
    return value.replace(
      /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
      (whole, braced?: string, op?: string, fallback?: string, bare?: string) => {
        if (whole === '$$') return '$';
        const name = braced ?? bare ?? '';
        const set = env[name];
        if (op === ':-') return set === undefined || set === '' ? (fallback ?? '') : set;
        if (op === '-') return set ?? fallback ?? '';
        return set ?? '';
      },
    );
  }
  if (Array.isArray(value)) return value.map((item) => interpolate(item, env));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  return value;
}

/** The compose file as YAML (anchors and `<<` merge keys resolved), interpolated with `env`. */
export function readComposeFile(env: Readonly<Record<string, string>> = {}): Record<string, unknown> {
  const parsed: unknown = parse(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true });
  const interpolated = interpolate(parsed, env);
  if (typeof interpolated !== 'object' || interpolated === null || Array.isArray(interpolated))
    throw new Error('docker-compose.yml is not a mapping');
  return Object.fromEntries(Object.entries(interpolated));
}

/** The first compose CLI that answers here (`docker compose` v2 or Debian's `docker-compose` v1), if any. */
export function composeCli(): { command: string; args: string[] } | undefined {
  for (const candidate of [
    { command: 'docker', args: ['compose'] },
    { command: 'docker-compose', args: [] },
  ]) {
    const probe = spawnSync(candidate.command, [...candidate.args, 'version'], { encoding: 'utf8' });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

/**
 * Resolves the compose file with the compose CLI when one is installed
 * (`config`: parses, validates and interpolates without an engine), else
 * from the YAML here. The environment is empty (PATH only), so every
 * `${VAR:-default}` takes its default: what `docker compose up` does on a
 * machine without a `.env`.
 *
 * @param opts.useCli false: resolve from the YAML even when a CLI is installed (to compare both)
 * @throws Error with the CLI's message when it rejects the file
 */
export function loadCompose(opts: { useCli?: boolean } = {}): ComposeModel {
  const cli = opts.useCli === false ? undefined : composeCli();
  let document: unknown;
  let resolvedBy = 'yaml';
  if (cli !== undefined) {
    const result = spawnSync(cli.command, [...cli.args, '-f', COMPOSE_FILE, 'config'], {
      encoding: 'utf8',
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
    });
    if (result.status !== 0) throw new Error(`${cli.command} ${cli.args.join(' ')} config failed: ${result.stderr}`);
    document = parse(result.stdout);
    resolvedBy = [cli.command, ...cli.args].join(' ');
  } else {
    document = readComposeFile();
  }
  const compose = ComposeSchema.parse(document);
  const services = Object.fromEntries(
    Object.entries(compose.services).map(([name, raw]) => [name, normalizeService(name, raw)]),
  );
  return { resolvedBy, services, volumes: Object.keys(compose.volumes ?? {}) };
}

function normalizeService(name: string, raw: z.infer<typeof ServiceSchema>): ComposeService {
  const environment: Record<string, string> = {};
  if (Array.isArray(raw.environment)) {
    for (const entry of raw.environment) {
      const at = entry.indexOf('=');
      environment[at < 0 ? entry : entry.slice(0, at)] = at < 0 ? '' : entry.slice(at + 1);
    }
  } else {
    for (const [key, value] of Object.entries(raw.environment ?? {}))
      environment[key] = value === null ? '' : String(value);
  }
  const dependsOn: Record<string, string> = {};
  if (Array.isArray(raw.depends_on)) for (const dep of raw.depends_on) dependsOn[dep] = 'service_started';
  else for (const [dep, spec] of Object.entries(raw.depends_on ?? {})) dependsOn[dep] = spec.condition;
  const test = raw.healthcheck?.test;
  return {
    name,
    image: raw.image,
    build: raw.build === undefined ? undefined : { context: raw.build.context, dockerfile: raw.build.dockerfile },
    command: typeof raw.command === 'string' ? raw.command.split(/\s+/) : (raw.command ?? []),
    environment,
    dependsOn,
    healthcheck: typeof test === 'string' ? ['CMD-SHELL', test] : test,
    ports: (raw.ports ?? []).map(parsePort),
    volumes: (raw.volumes ?? []).map((volume) => {
      if (typeof volume !== 'string') return { source: volume.source ?? '', target: volume.target };
      const [source = '', target = ''] = volume.split(':');
      return { source, target };
    }),
    raw,
  };
}

function parsePort(port: string | { target: number; published?: string | number | boolean | null; host_ip?: string }): {
  hostIp: string;
  published: string;
  target: number;
} {
  if (typeof port !== 'string')
    return { hostIp: port.host_ip ?? '', published: String(port.published ?? ''), target: port.target };
  const parts = port.replace(/\/(tcp|udp)$/, '').split(':');
  const target = Number(parts.pop());
  const published = parts.pop() ?? '';
  return { hostIp: parts.join(':'), published, target };
}
