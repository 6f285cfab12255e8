/**
 * Issue 53 item 3: every app waits for its dependencies at start. The whole
 * stack (and one dag-service whose ops port the test watches) is started
 * against a PostgreSQL of the test's own on a spare port that comes up only
 * a few seconds later. No process exits on ECONNREFUSED; dag-service's
 * `/readyz` answers 503 while it waits, its log has one `waiting for
 * PostgreSQL` line, and everything is ready once PostgreSQL answers.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  startThrowawayPostgres,
  type ThrowawayPostgres,
} from '../../packages/runtime/test-fixtures/throwaway-postgres';
import { deleteKeysWithPrefix } from '../../packages/bus/test-fixtures/bus-test-env';
import { freePort, startStack, type Stack } from './stack';

const ROOT = join(__dirname, '..', '..');
let pg: ThrowawayPostgres | undefined;
let stack: Stack | undefined;
const busPrefix = `wait-${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  await stack?.stop();
  await pg?.destroy();
  await deleteKeysWithPrefix(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', busPrefix);
});

async function readyz(port: number): Promise<string> {
  return fetch(`http://127.0.0.1:${port}/readyz`).then(
    async (r) => `${r.status} ${await r.text()}`,
    (err: unknown) => `refused ${String(err)}`,
  );
}

it('a start before PostgreSQL is up waits with backoff (readiness 503, one log line) and comes up ready', async () => {
  const pgPort = await freePort();
  const opsPort = await freePort();
  const databaseUrl = `postgres://postgres@127.0.0.1:${pgPort}/postgres`;
  const service = spawn(process.execPath, [join(ROOT, 'apps', 'dag-service', 'dist', 'main.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      DB_SCHEMA: `wait_${randomBytes(3).toString('hex')}`,
      BUS_PREFIX: busPrefix,
      OPS_PORT: String(opsPort),
      OPS_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      LOG_PRETTY: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  service.stdout.on('data', (d: Buffer) => (log += d.toString()));
  service.stderr.on('data', (d: Buffer) => (log += d.toString()));
  try {
    // The whole stack starts too, against the same not-yet-running server.
    const stackStarting = startStack({}, { databaseUrl });
    stackStarting.catch(() => undefined);
    let waiting = '';
    for (let i = 0; i < 100 && !waiting.startsWith('503'); i++) {
      waiting = await readyz(opsPort);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(waiting).toMatch(/^503 .*"postgres"/);
    await new Promise((r) => setTimeout(r, 3000));
    expect(service.exitCode).toBeNull();
    pg = await startThrowawayPostgres({ port: pgPort });
    stack = await stackStarting; // every app of it healthy, none exited
    let ready = '';
    for (let i = 0; i < 300 && !ready.startsWith('200'); i++) {
      ready = await readyz(opsPort);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(ready).toMatch(/^200 /);
    const lines = log.split('\n').filter((line) => line.includes('waiting for PostgreSQL'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`127.0.0.1:${pgPort}`);
    expect(lines[0]).toContain('ECONNREFUSED');
    expect(log).toContain('PostgreSQL answered');
    expect(log).not.toContain('start failed');
  } finally {
    await new Promise<void>((resolve) => {
      if (service.exitCode !== null) return resolve();
      service.once('exit', () => resolve());
      service.kill('SIGTERM');
    });
  }
}, 120_000);
