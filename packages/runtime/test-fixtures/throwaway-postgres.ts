/**
 * A PostgreSQL server of the test's own (CONTRIBUTING "Tests": tests that stop
 * a database start their own on a spare port, never the machine's): a fresh
 * `initdb` directory under the OS temp dir, started with `pg_ctl` on a free
 * 127.0.0.1 port, which the test may stop (fast or immediate shutdown) and
 * start again on the same port and data directory as often as it likes.
 *
 * PostgreSQL refuses to run as root; tests (and CI) run as root, so every
 * PostgreSQL binary runs as the `postgres` user through `runuser -u postgres
 * --` when the process is root, and directly otherwise. Authentication is
 * `trust` on 127.0.0.1 (superuser `postgres`, database `postgres`), `fsync`
 * is off: the data is thrown away with the directory.
 *
 * {@link startThrowawayStandby} adds a streaming replica of such a server
 * (`pg_basebackup -R`: a hot standby that replays the primary's WAL; issue 47).
 *
 * Reused by the fault suite (issue 18); keep it free of app imports.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where the PostgreSQL binaries are: `PG_BIN` if set, else `pg_ctl`/`initdb` on PATH. */
function binary(name: 'initdb' | 'pg_ctl' | 'pg_basebackup'): string {
  const dir = process.env.PG_BIN;
  return dir === undefined || dir === '' ? name : join(dir, name);
}

/** Runs a PostgreSQL binary as `postgres` when we are root (it refuses root), else as ourselves. */
async function runAsPostgres(command: string, args: readonly string[], timeoutMs = 60_000): Promise<string> {
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, [...args]];
  const { stdout } = await run(file, argv, { timeout: timeoutMs, env: { ...process.env, LC_ALL: 'C' } });
  return stdout;
}

/** A free TCP port on 127.0.0.1 (the OS picks; another process may take it before we bind, so callers retry). */
export async function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** How {@link ThrowawayPostgres.stop} shuts the server down (`pg_ctl stop -m`). */
export type PostgresStopMode = 'fast' | 'immediate';

/** A running (or stopped) throwaway PostgreSQL; see the module comment. */
export interface ThrowawayPostgres {
  /** Its port on 127.0.0.1 (kept across stop/start). */
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  readonly url: string;
  /** The data directory (owned by `postgres`); its `server.log` has the server's log. */
  readonly dataDir: string;
  /**
   * Stops the server: `fast` (SIGINT: sessions are terminated with 57P01, what
   * an operator's restart does) or `immediate` (SIGQUIT: no clean shutdown).
   * Resolves once it is down. No-op when stopped.
   */
  stop(mode?: PostgresStopMode): Promise<void>;
  /** Starts it again on the same port and data; resolves once it accepts connections. No-op when running. */
  start(): Promise<void>;
  /** True between a start and a stop. */
  readonly running: boolean;
  /** Stops it (immediate) and deletes the data directory. */
  destroy(): Promise<void>;
}

/**
 * Creates and starts a throwaway PostgreSQL (see the module comment): initdb
 * takes about 1–3 s, the start under 1 s.
 *
 * @param options.port  a fixed port (default: a free one, retried on a clash)
 * @throws when `initdb`/`pg_ctl` are missing or the server does not start
 */
export async function startThrowawayPostgres(options: { port?: number } = {}): Promise<ThrowawayPostgres> {
  const dataDir = mkdtempSync(join(tmpdir(), 'throwaway-pg-'));
  if (process.getuid?.() === 0) chownSync(dataDir, ...postgresIds());
  await runAsPostgres(binary('initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  return startServer(dataDir, options.port);
}

/**
 * Creates and starts a streaming replica of `primary` (which must be running):
 * `pg_basebackup -R -X stream` copies its data directory (a few seconds for a
 * fresh cluster) and writes `standby.signal` and `primary_conninfo`, so the
 * copy starts as a hot standby on a port of its own that replays the primary's
 * WAL as it streams in. The returned server is the standby: stopping it (say,
 * `immediate`) is "the replica was killed"; its `url` reads (`pg_is_in_recovery()`
 * is true) and refuses writes. `SELECT pg_wal_replay_pause()` on it pauses replay.
 *
 * @param options.port  a fixed port (default: a free one)
 * @throws when `pg_basebackup` is missing or the standby does not start
 */
export async function startThrowawayStandby(
  primary: ThrowawayPostgres,
  options: { port?: number } = {},
): Promise<ThrowawayPostgres> {
  const dataDir = mkdtempSync(join(tmpdir(), 'throwaway-pg-standby-'));
  if (process.getuid?.() === 0) chownSync(dataDir, ...postgresIds());
  const args = ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dataDir, '-R', '-X', 'stream'];
  await runAsPostgres(binary('pg_basebackup'), [...args, '--no-sync', '-c', 'fast'], 120_000);
  return startServer(dataDir, options.port);
}

/** Starts PostgreSQL on an existing data directory (see the module comment). */
async function startServer(dataDir: string, fixedPort: number | undefined): Promise<ThrowawayPostgres> {
  let port = fixedPort ?? (await freeTcpPort());
  let running = false;
  const pgCtlStart = () =>
    runAsPostgres(binary('pg_ctl'), [
      'start',
      '-D',
      dataDir,
      '-w',
      '-t',
      '30',
      '-l',
      join(dataDir, 'server.log'),
      '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dataDir} -c fsync=off -c max_connections=200`,
    ]);
  for (let attempt = 1; ; attempt++) {
    try {
      await pgCtlStart();
      break;
    } catch (err) {
      if (fixedPort !== undefined || attempt >= 3) {
        rmSync(dataDir, { recursive: true, force: true });
        throw err;
      }
      port = await freeTcpPort(); // the port was taken meanwhile
    }
  }
  running = true;
  const server: ThrowawayPostgres = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir,
    get running() {
      return running;
    },
    async stop(mode: PostgresStopMode = 'fast') {
      if (!running) return;
      await runAsPostgres(binary('pg_ctl'), ['stop', '-D', dataDir, '-m', mode, '-w', '-t', '30']);
      running = false;
    },
    async start() {
      if (running) return;
      await pgCtlStart();
      running = true;
    },
    async destroy() {
      await server.stop('immediate').catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** uid and gid of the `postgres` user (from `id`; the fixture owns no user database). */
function postgresIds(): [number, number] {
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return [uid, gid];
}
