/**
 * infra/docker/<app>.Dockerfile and .dockerignore, read without a Docker
 * engine (issue "Images and compose"): multi-stage with `turbo prune
 * <app> --docker`, a frozen install from the pruned lockfile, production
 * dependencies only in the runtime stage, a non-root user, a HEALTHCHECK on
 * the app's own /healthz and port, pinned tool versions. The build itself is
 * exercised by image-build.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { APPS, appPorts, ROOT, type AppName } from './app-config';
import { dockerignoreMatcher, readDockerfile, type Instruction, type Stage } from './dockerfile';

const workspace = z
  .object({ catalog: z.record(z.string(), z.string()) })
  .loose()
  .parse(parse(readFileSync(join(ROOT, 'pnpm-workspace.yaml'), 'utf8')));
const rootPackage = z
  .object({ packageManager: z.string() })
  .loose()
  .parse(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')));

function runs(stage: Stage | undefined): string[] {
  return (stage?.instructions ?? []).filter((i) => i.keyword === 'RUN').map((i) => i.args);
}

function only(stage: Stage | undefined, keyword: string): Instruction | undefined {
  const found = (stage?.instructions ?? []).filter((i) => i.keyword === keyword);
  expect(`${keyword} ×${found.length}`).toBe(`${keyword} ×1`);
  return found[0];
}

describe.each(APPS)('infra/docker/%s.Dockerfile', (app: AppName) => {
  const dockerfile = readDockerfile(app);
  const stages = dockerfile.stages;
  const runtime = stages[stages.length - 1];
  const ports = appPorts(app, {});

  it('is multi-stage: tools, turbo prune of this app, build, and a runtime on the plain Node 20 image', () => {
    expect(stages.map((s) => s.name)).toEqual(['tools', 'prune', 'build', 'runtime']);
    expect(dockerfile.globalArgs.NODE_IMAGE).toMatch(/^node:20[.-]/);
    expect(runtime?.from).toBe(dockerfile.globalArgs.NODE_IMAGE);
    // run-service's build compiles its native step spawner: its tools come from the full Debian image, with gcc.
    if (app === 'run-service') {
      expect(stages[0]?.from).toBe('node:20-bookworm');
    }
    // The gateway's image also builds the web console (issue 26): its static files are served from /app/web.
    const scopes = app === 'mcp-gateway' ? `@dagu-mcp/${app} @dagu-mcp/web` : `@dagu-mcp/${app}`;
    expect(runs(stages[1])).toEqual([`turbo prune ${scopes} --docker`]);
  });

  it('pins pnpm and turbo to the versions the repository uses', () => {
    const pnpm = rootPackage.packageManager.replace(/^pnpm@/, '');
    expect(runs(stages[0])).toEqual([`npm install --global pnpm@${pnpm} turbo@${workspace.catalog.turbo ?? '?'}`]);
  });

  it('installs from the pruned lockfile (frozen) before copying sources, builds this app and deploys it with production dependencies only', () => {
    const build = stages[2];
    const steps = (build?.instructions ?? []).map((i) => `${i.keyword} ${i.args}`);
    const install = steps.indexOf('RUN pnpm install --frozen-lockfile');
    expect(install).toBeGreaterThan(steps.indexOf('COPY --from=prune /repo/out/pnpm-lock.yaml ./'));
    expect(install).toBeLessThan(steps.indexOf('COPY --from=prune /repo/out/full/ ./'));
    expect(runs(build)).toEqual([
      'pnpm install --frozen-lockfile',
      `turbo run build --filter=@dagu-mcp/${app}...${app === 'mcp-gateway' ? ' --filter=@dagu-mcp/web' : ''}`,
      `pnpm --filter=@dagu-mcp/${app} deploy --prod --legacy ../app`,
    ]);
  });

  it('runtime: only the deployed app, a numeric non-root user (run-service: root with a step user), production mode, node dist/main.js', () => {
    const copies = (runtime?.instructions ?? []).filter((i) => i.keyword === 'COPY').map((i) => i.args);
    expect(copies).toEqual(
      app === 'mcp-gateway'
        ? ['--from=build /app ./', '--from=build /repo/apps/web/dist ./web']
        : ['--from=build /app ./'],
    );
    const user = only(runtime, 'USER')?.args ?? '';
    if (app === 'run-service') {
      // Each run's steps run as a uid of their own; switching users needs root (docs/security.md).
      expect(runs(runtime)).toEqual(['getent passwd dagu-step || useradd --system --no-create-home dagu-step']);
      expect(user).toBe('0:0');
      expect(only(runtime, 'ENV')?.args).toBe('NODE_ENV=production RUN_STEP_UID_RANGE=200000-265535');
    } else {
      expect(runs(runtime)).toEqual([]);
      expect(user).toMatch(/^[1-9]\d*:[1-9]\d*$/);
      expect(only(runtime, 'ENV')?.args).toBe(
        app === 'mcp-gateway' ? 'NODE_ENV=production WEB_DIST_DIR=/app/web' : 'NODE_ENV=production',
      );
    }
    expect(only(runtime, 'CMD')?.args).toBe('["node", "dist/main.js"]');
    expect(only(runtime, 'STOPSIGNAL')?.args).toBe('SIGTERM');
  });

  it("exposes the app's ports and checks health on its own /healthz and port", () => {
    const exposed = (only(runtime, 'EXPOSE')?.args ?? '').split(/\s+/).map(Number);
    expect(exposed.sort()).toEqual([...new Set([ports.health, ports.metrics])].sort());
    const healthcheck = only(runtime, 'HEALTHCHECK')?.args ?? '';
    const variable = app === 'mcp-gateway' ? 'PORT' : 'OPS_PORT';
    expect(healthcheck).toContain(`fetch('http://127.0.0.1:'+(process.env.${variable}||${ports.health})+'/healthz')`);
    expect(healthcheck).toMatch(/--interval=\d+s --timeout=\d+s --start-period=\d+s --retries=\d+\s+CMD \[/);
  });
});

describe('.dockerignore', () => {
  const ignored = dockerignoreMatcher(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));

  it.each([
    'node_modules',
    'apps/mcp-gateway/node_modules/x',
    'packages/runtime/dist/index.js',
    '.git/HEAD',
    'apps/x/.turbo/log',
    'npm-debug.log',
    '.env',
    '.env.local',
  ])('keeps local state out of the context: %s', (path) => {
    expect(ignored(path)).toBe(true);
  });

  it.each([
    'package.json',
    'pnpm-lock.yaml',
    'pnpm-workspace.yaml',
    'turbo.json',
    'tsconfig.base.json',
    'apps/mcp-gateway/src/main.ts',
    'apps/mcp-gateway/reference-topics/x.md',
    'packages/runtime/src/index.ts',
  ])('keeps what the build needs: %s', (path) => {
    expect(ignored(path)).toBe(false);
  });
});
