/**
 * The extension-service generator (issue 29 item 1, `npm run new:service -- <name>`,
 * scripts/new-service.mjs): its output type-checks against the workspace, passes its own
 * tests, and carries a Dockerfile, a compose file and a Kubernetes Deployment that parse
 * and validate.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { validateAgainstKubernetesSchema } from './k8s-model';
import type { K8sObject } from './kustomize';

const ROOT = join(__dirname, '..', '..');
const name = `gen-probe-${randomBytes(3).toString('hex')}`;
const dir = join(ROOT, 'extensions', name);

beforeAll(() => {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'new-service.mjs'), name], { cwd: ROOT });
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

test('writes the skeleton: package, sources with a test, Dockerfile, compose file, Deployment', () => {
  for (const file of [
    'package.json',
    'tsconfig.json',
    'src/main.ts',
    'src/tools.ts',
    'src/tools.test.ts',
    'Dockerfile',
    'compose.yaml',
    'k8s/deployment.yaml',
    'README.md',
  ])
    expect(existsSync(join(dir, file))).toBe(true);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  expect(pkg).toMatchObject({ name: `@dagu-mcp/${name}-service`, scripts: { build: 'tsc -p tsconfig.json' } });
});

test('refuses to overwrite, and refuses a bad name', () => {
  const again = spawnSync(process.execPath, [join(ROOT, 'scripts', 'new-service.mjs'), name], { cwd: ROOT });
  expect(again.status).toBe(1);
  const bad = spawnSync(process.execPath, [join(ROOT, 'scripts', 'new-service.mjs'), 'Bad_Name'], { cwd: ROOT });
  expect(bad.status).toBe(2);
});

test('type-checks against the workspace packages (strict tsconfig)', () => {
  const config = join(dir, 'tsconfig.verify.json');
  writeFileSync(
    config,
    JSON.stringify({
      extends: '../../tsconfig.check.json',
      include: ['src/**/*.ts'],
      compilerOptions: { noEmit: true },
    }),
  );
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(tsc.stdout + tsc.stderr).toBe('');
  expect(tsc.status).toBe(0);
}, 120_000);

test('passes its own tests', () => {
  const jest = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), `extensions/${name}`, '--maxWorkers=1', '--ci'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  expect(jest.stderr).toMatch(/Tests:\s+2 passed, 2 total/);
  expect(jest.status).toBe(0);
}, 120_000);

test('its Deployment validates against the Kubernetes schema; its compose file names the image and Redis', () => {
  const deployment = parse(readFileSync(join(dir, 'k8s', 'deployment.yaml'), 'utf8')) as K8sObject;
  expect(deployment.kind).toBe('Deployment');
  expect(() => validateAgainstKubernetesSchema(deployment)).not.toThrow();
  const compose = parse(readFileSync(join(dir, 'compose.yaml'), 'utf8')) as {
    services: Record<string, { image: string; environment: Record<string, string>; build: { dockerfile: string } }>;
  };
  const service = compose.services[`${name}-service`];
  expect(service?.image).toContain(`${name}-service`);
  expect(service?.environment.REDIS_URL).toContain('redis:6379');
  expect(existsSync(join(ROOT, service?.build.dockerfile ?? 'missing'))).toBe(true);
});
