import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayConfigSchema, isLoopback, loadGatewayConfig } from '../../apps/mcp-gateway/src/config';
import { loadServiceConfig, serviceConfigSchema } from '../../packages/service-kit/src/service-config';
import { runConfigSchema } from '../../apps/run-service/src/config/run-config';
import { agentConfigSchema } from '../../apps/agent-service/src/config/agent-config';

/** The repository root. */
export const ROOT = join(__dirname, '..', '..');

export const SERVICE_APPS = ['dag-service', 'run-service', 'wiki-service', 'agent-service'] as const;
export const APPS = ['mcp-gateway', ...SERVICE_APPS] as const;
export type AppName = (typeof APPS)[number];

/**
 * A service's defaults exactly as its `src/main.ts` hands them to
 * `runServiceMain` (read from the source: importing main.ts would start it).
 */
export function serviceDefaults(app: AppName): { schema: string; opsPort: number } {
  const source = readFileSync(join(ROOT, 'apps', app, 'src', 'main.ts'), 'utf8');
  const match = /\{\s*schema:\s*'([a-z_]+)',\s*opsPort:\s*(\d+)\s*\}/.exec(source);
  if (match === null) throw new Error(`apps/${app}/src/main.ts: no runServiceMain defaults found`);
  return { schema: match[1] ?? '', opsPort: Number(match[2]) };
}

function schemaShape(app: AppName): Record<string, { safeParse(value: unknown): { success: boolean } }> {
  if (app === 'mcp-gateway') return GatewayConfigSchema.shape;
  const service = serviceConfigSchema(serviceDefaults(app)).shape;
  // run-service also reads its engine settings (RUN_*, e.g. RUN_STEP_USER) in its main.ts, and
  // agent-service its key ring (DAGU_ENCRYPTION_KEY).
  if (app === 'run-service') return { ...service, ...runConfigSchema().shape };
  return app === 'agent-service' ? { ...service, ...agentConfigSchema().shape } : service;
}

/** Every variable the app's config schema reads: each key and its `<KEY>_FILE` form. */
export function configVariables(app: AppName): ReadonlySet<string> {
  const keys = Object.keys(schemaShape(app));
  return new Set([...keys, ...keys.map((key) => `${key}_FILE`)]);
}

/**
 * Variables a deployment must set although the schema has a default: the
 * defaults of the stores point at 127.0.0.1, which is wrong in a container,
 * and the gateway's HOST defaults to loopback. Plus any key the schema
 * itself requires (no default, not optional).
 */
export function deploymentRequiredVariables(app: AppName): string[] {
  const shape = schemaShape(app);
  const schemaRequired = Object.keys(shape).filter((key) => !(shape[key]?.safeParse(undefined).success ?? true));
  const always = app === 'mcp-gateway' ? ['REDIS_URL', 'DATABASE_URL', 'HOST'] : ['REDIS_URL', 'DATABASE_URL'];
  return [...new Set([...always, ...schemaRequired])];
}

/** The ports an app listens on under `env`, as its real config loader computes them. */
export interface AppPorts {
  /** The port of `/healthz` and `/readyz`: the gateway's PORT, a service's OPS_PORT. */
  readonly health: number;
  /** The port of `/metrics`: the gateway's METRICS_PORT, a service's OPS_PORT. */
  readonly metrics: number;
  /** The gateway's public port (`/mcp`, `/api/v1`). */
  readonly public?: number;
}

/** Parses `env` with the app's own loader (throws its `ConfigError`) and returns its ports. */
export function appPorts(app: AppName, env: Record<string, string>): AppPorts {
  if (app === 'mcp-gateway') {
    const config = loadGatewayConfig(env);
    return { health: config.PORT, metrics: config.METRICS_PORT, public: config.PORT };
  }
  const config = loadServiceConfig(serviceDefaults(app), env);
  return { health: config.OPS_PORT, metrics: config.OPS_PORT };
}

/**
 * What is wrong with the environment a deployment gives `app`: variables its
 * schema does not know, deployment-required ones that are unset or empty,
 * a loopback HOST for the gateway, and whatever its config loader rejects.
 *
 * @returns one message per problem; empty when the environment is good
 */
export function environmentProblems(app: AppName, env: Record<string, string>): string[] {
  const known = configVariables(app);
  const problems = Object.keys(env)
    .filter((name) => !known.has(name))
    .map((name) => `${app}: ${name} is not a variable of its config schema`);
  for (const name of deploymentRequiredVariables(app)) {
    if ((env[name] ?? '') === '' && (env[`${name}_FILE`] ?? '') === '') problems.push(`${app}: ${name} must be set`);
  }
  if (app === 'mcp-gateway' && env.HOST !== undefined && isLoopback(env.HOST)) {
    problems.push(`${app}: HOST=${env.HOST} is loopback; nothing outside the container could reach it`);
  }
  try {
    appPorts(app, env);
  } catch (err) {
    problems.push(`${app}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return problems;
}
