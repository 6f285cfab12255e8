/**
 * The images' build, without a Docker engine (issue "Images and compose"):
 * each app's Dockerfile is run step by step by `simulateImageBuild`
 * (dockerfile.ts) — the real `turbo prune`, the frozen install from the
 * pruned lockfile, the build, `pnpm deploy --prod` — then the runtime stage's
 * CMD is started from the deployed directory alone, as the Dockerfile's
 * non-root USER, and its HEALTHCHECK command must pass.
 *
 * About half a minute per app. `DEPLOY_IMAGE_APPS=mcp-gateway,dag-service`
 * limits the apps; `DEPLOY_IMAGE_APPS=none` skips this file.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { deleteKeysWithPrefix, TEST_REDIS_URL } from '../../packages/bus/test-fixtures/bus-test-env';
import { freePort } from '../e2e/stack';
import { APPS, type AppName } from './app-config';
import { installedPackages, openPath, runSimulatedImage, simulateImageBuild } from './dockerfile';

const selected = (process.env.DEPLOY_IMAGE_APPS ?? APPS.join(','))
  .split(',')
  .map((name) => name.trim())
  .filter((name): name is AppName => APPS.some((app) => app === name));
const DATABASE_URL = process.env.E2E_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DEV_ONLY = ['typescript', 'jest', '@swc/core', '@swc/jest', 'turbo', '@types/jest', 'fast-check'];

const maybe = selected.length > 0 ? describe : describe.skip;

maybe('images built by their Dockerfiles, without Docker', () => {
  it.each(selected)(
    '%s: builds, holds production dependencies only, and passes its HEALTHCHECK as the non-root user',
    async (app) => {
      const workdir = mkdtempSync(join(tmpdir(), `image-${app}-`));
      const id = randomBytes(4).toString('hex');
      const schema = `image_${id}`;
      try {
        const image = simulateImageBuild(app, workdir);
        expect(readdirSync(image.root)).toEqual(['app']);
        const deployed = join(image.root, image.workdir);
        // The gateway's image carries the built web console where WEB_DIST_DIR points (issue 26).
        if (app === 'mcp-gateway') expect(readdirSync(join(deployed, 'web'))).toEqual(['console', 'index.html']);
        // run-service's image carries its native step spawner, built in the build stage.
        if (app === 'run-service') expect(existsSync(join(deployed, 'dist', 'native', 'step-spawner'))).toBe(true);
        const packages = installedPackages(deployed);
        expect(packages).toContain('@dagu-mcp/runtime');
        expect(packages.filter((name) => DEV_ONLY.includes(name))).toEqual([]);
        expect(
          readdirSync(join(deployed, 'node_modules', '.pnpm')).filter((dir) =>
            /^(typescript|jest|@swc\+core)@/.test(dir),
          ),
        ).toEqual([]);

        openPath(deployed);
        const ports: Record<string, string> =
          app === 'mcp-gateway'
            ? { PORT: String(await freePort()), METRICS_PORT: String(await freePort()) }
            : { OPS_PORT: String(await freePort()) };
        const env = { DATABASE_URL, DB_SCHEMA: schema, BUS_PREFIX: `image-${id}`, LOG_LEVEL: 'warn', ...ports };
        const { child } = await runSimulatedImage(image, env, 30_000);
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
        expect(child.exitCode).toBe(0);
      } finally {
        rmSync(workdir, { recursive: true, force: true });
        const pool = new Pool({ connectionString: DATABASE_URL });
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.end();
        await deleteKeysWithPrefix(TEST_REDIS_URL, `image-${id}`);
      }
    },
    600_000,
  );
});
