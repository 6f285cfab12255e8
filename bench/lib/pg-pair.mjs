/**
 * A throwaway PostgreSQL primary and its streaming replica for benchmarks (issue 47), never the
 * machine's server: `initdb` into a temp directory, `pg_ctl start` on a spare 127.0.0.1 port, and
 * later `pg_basebackup -R -X stream` of it started as a hot standby on another port. As the
 * test fixture packages/runtime/test-fixtures/throwaway-postgres.ts does (the bench runs plain
 * Node and cannot import TypeScript): every binary runs as `postgres` through `runuser` when we are
 * root. `fsync` is off: the data is thrown away with the directory.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './stack.mjs';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL binary (`PG_BIN`/name, else PATH) as `postgres` when root. */
async function pgRun(name, args, timeoutMs = 600_000) {
  const command = process.env.PG_BIN ? join(process.env.PG_BIN, name) : name;
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const { stdout } = await run(file, argv, { timeout: timeoutMs, env: { ...process.env, LC_ALL: 'C' } });
  return stdout;
}

function ownedTempDir(label) {
  const dir = mkdtempSync(join(tmpdir(), label));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  return dir;
}

/**
 * Starts PostgreSQL on `dataDir`; resolves with `{port, url, dataDir, stop(), destroy()}`.
 * `settings` are extra `-c` settings (sizes for a million-row table).
 */
async function startOn(dataDir, settings) {
  const port = await freePort();
  const options = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dataDir}`,
    '-c fsync=off',
    '-c max_connections=300',
    ...settings.map((s) => `-c ${s}`),
  ].join(' ');
  const ctl = (args) => pgRun('pg_ctl', ['-D', dataDir, ...args]);
  await ctl(['start', '-w', '-t', '60', '-l', join(dataDir, 'server.log'), '-o', options]);
  let running = true;
  const server = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir,
    async stop(mode = 'fast') {
      if (!running) return;
      await ctl(['stop', '-m', mode, '-w', '-t', '60']);
      running = false;
    },
    async destroy() {
      await server.stop('immediate').catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** Settings of both servers: room for a million runs in memory, few checkpoints while seeding. */
export const BENCH_PG_SETTINGS = ['shared_buffers=1GB', 'max_wal_size=8GB', 'synchronous_commit=off'];

/** A fresh primary (initdb + start). */
export async function startBenchPrimary(settings = BENCH_PG_SETTINGS) {
  const dataDir = ownedTempDir('bench-pg-primary-');
  await pgRun('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  return startOn(dataDir, settings);
}

/** A hot standby of `primary` (`pg_basebackup -R -X stream`), started; replays as WAL streams in. */
export async function startBenchStandby(primary, settings = BENCH_PG_SETTINGS) {
  const dataDir = ownedTempDir('bench-pg-standby-');
  const args = ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dataDir, '-R', '-X', 'stream'];
  await pgRun('pg_basebackup', [...args, '--no-sync', '-c', 'fast']);
  return startOn(dataDir, settings);
}
