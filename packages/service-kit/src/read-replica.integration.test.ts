import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createPool, ReadRouter, ReplicaDeclined, type Pool, type ReadSource } from '@dagu-mcp/runtime';
import { captureLogs } from '../../runtime/test-fixtures/log-capture';
import {
  startThrowawayPostgres,
  startThrowawayStandby,
  type ThrowawayPostgres,
} from '../../runtime/test-fixtures/throwaway-postgres';
import { RedisWriteMarks } from './redis-write-marks';

/**
 * Reads served by a real streaming replica (a
 * `pg_basebackup -R` standby of a throwaway primary, both on spare ports, never
 * the machine's PostgreSQL), the lag bound and read-your-writes with replay
 * paused (`pg_wal_replay_pause()`), and the replica killed. The write marks are
 * in the machine's Redis under a prefix of this test's own.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MAX_LAG_MS = 1500;
let primary: ThrowawayPostgres;
let standby: ThrowawayPostgres;
let primaryPool: Pool;
let replicaPool: Pool;
let redis: Redis;
let router: ReadRouter;
const prefix = `rr-test-${randomBytes(4).toString('hex')}`;
const logs = captureLogs('warn');

beforeAll(async () => {
  primary = await startThrowawayPostgres();
  primaryPool = createPool({ url: primary.url, schema: 'public', max: 4, logger: logs.logger });
  await primaryPool.query('CREATE TABLE notes (id serial PRIMARY KEY, note text NOT NULL)');
  standby = await startThrowawayStandby(primary);
  replicaPool = createPool({ url: standby.url, schema: 'public', max: 4, connectTimeoutMs: 1000, logger: logs.logger });
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  router = new ReadRouter({
    primary: primaryPool,
    replica: replicaPool,
    marks: new RedisWriteMarks(redis, prefix),
    maxLagMs: MAX_LAG_MS,
    checkMs: 50,
    logger: logs.logger,
  });
}, 120_000);

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await router.close().catch(() => undefined);
  await primaryPool.end().catch(() => undefined);
  await standby.destroy();
  await primary.destroy();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Who served a read of `note`, what it saw, and that server's own word on being a standby. */
async function readNote(caller: string | undefined, note: string) {
  return router.read(caller, async (db, source: ReadSource) => {
    const { rows } = await db.query<{ n: number; standby: boolean }>(
      'SELECT count(*)::int AS n, pg_is_in_recovery() AS standby FROM notes WHERE note = $1',
      [note],
    );
    return { source, seen: rows[0]?.n ?? 0, standby: rows[0]?.standby };
  });
}

/** Inserts `note` on the primary as `caller`'s change, recording its write position as a mutation does. */
async function writeNote(caller: string, note: string): Promise<void> {
  await primaryPool.query('INSERT INTO notes (note) VALUES ($1)', [note]);
  await router.noteWrite(caller);
}

/** Waits until the standby has replayed everything the primary has written. */
async function caughtUp(): Promise<void> {
  const { rows } = await primaryPool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  const target = rows[0]?.lsn ?? '0/0';
  for (let i = 0; i < 200; i++) {
    const { rows: r } = await replicaPool.query<{ ok: boolean }>(
      'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok',
      [target],
    );
    if (r[0]?.ok === true) return;
    await sleep(25);
  }
  throw new Error('standby did not catch up');
}

it('serves a lag-tolerant read from the replica, which is a standby', async () => {
  await primaryPool.query("INSERT INTO notes (note) VALUES ('seed')");
  await caughtUp();
  await sleep(60); // past the cached probe
  const read = await readNote(undefined, 'seed');
  expect(read).toEqual({ source: 'replica', seen: 1, standby: true });
  expect(router.served.replica).toBeGreaterThan(0);
}, 30_000);

it('re-runs a read the replica declines on the primary', async () => {
  const sources: ReadSource[] = [];
  const answer = await router.read(undefined, async (db, source) => {
    sources.push(source);
    if (source === 'replica') throw new ReplicaDeclined('run still running');
    const { rows } = await db.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
    return rows[0]?.standby;
  });
  expect(sources).toEqual(['replica', 'primary']);
  expect(answer).toBe(false);
});

it('with replay paused: the writer reads its write on the primary, others read the stale replica until the lag bound, then the primary', async () => {
  await primaryPool.query("INSERT INTO notes (note) VALUES ('recent')"); // a fresh last-replayed commit
  await caughtUp();
  await replicaPool.query('SELECT pg_wal_replay_pause()');
  try {
    await writeNote('alice', 'paused-write');
    await sleep(60);
    // The writer's read goes to the primary: the replica has not replayed its write.
    expect(await readNote('alice', 'paused-write')).toEqual({ source: 'primary', seen: 1, standby: false });
    // Another caller may read the replica, stale but within the bound: the row is not there yet.
    expect(await readNote('bob', 'paused-write')).toEqual({ source: 'replica', seen: 0, standby: true });
    // Past the bound, the replica is too far behind for anyone.
    await sleep(MAX_LAG_MS + 200);
    expect(await readNote('bob', 'paused-write')).toEqual({ source: 'primary', seen: 1, standby: false });
    expect(await readNote(undefined, 'paused-write')).toMatchObject({ source: 'primary', seen: 1 });
  } finally {
    await replicaPool.query('SELECT pg_wal_replay_resume()');
  }
  await caughtUp();
  await sleep(60);
  // Replayed: both read the replica again, the writer included (its mark is below the replay LSN).
  expect(await readNote('bob', 'paused-write')).toEqual({ source: 'replica', seen: 1, standby: true });
  expect(await readNote('alice', 'paused-write')).toEqual({ source: 'replica', seen: 1, standby: true });
}, 30_000);

it('keeps a higher write mark when a lower one lands later', async () => {
  const marks = new RedisWriteMarks(redis, prefix);
  await marks.record('carol', 0x2_0000_0010n, 10_000);
  await marks.record('carol', 0x1_ffff_ffffn, 10_000);
  expect(await marks.latest('carol')).toBe(0x2_0000_0010n);
  expect(await marks.latest('nobody')).toBeUndefined();
});

it('with the replica killed: reads keep working on the primary, promptly, and no error escapes', async () => {
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown): void => {
    uncaught.push(err);
  };
  process.on('uncaughtException', onUncaught);
  try {
    await writeNote('dave', 'before-kill');
    await caughtUp();
    await sleep(60);
    expect(await readNote(undefined, 'before-kill')).toMatchObject({ source: 'replica', seen: 1 });
    // Reads in flight while the replica dies, and reads after.
    const inFlight = Array.from({ length: 6 }, () => readNote(undefined, 'before-kill'));
    await standby.stop('immediate');
    const started = Date.now();
    const after = await Promise.all([...inFlight, readNote(undefined, 'before-kill'), readNote('dave', 'before-kill')]);
    for (const read of after) expect(read.seen).toBe(1);
    await sleep(60);
    for (let i = 0; i < 5; i++) expect(await readNote(undefined, 'before-kill')).toMatchObject({ source: 'primary' });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(uncaught).toEqual([]);
  } finally {
    process.off('uncaughtException', onUncaught);
  }
  // Back up: the replica serves again.
  await standby.start();
  await caughtUp();
  await sleep(60);
  expect(await readNote(undefined, 'before-kill')).toMatchObject({ source: 'replica', seen: 1 });
}, 60_000);
