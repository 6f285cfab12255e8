/**
 * What the soak samples (issue 18 "Soak"): each process's resident memory
 * and open file descriptors (from /proc, Linux), the Redis key count and the
 * PostgreSQL client connections; and the least-squares slope of a series.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { Pool } from 'pg';

/** One sample: per-process RSS (MiB) and fds, Redis keys, PostgreSQL connections, at `t` s since the start. */
export interface SoakSample {
  readonly t: number;
  readonly rssMiB: Readonly<Record<string, number>>;
  readonly fds: Readonly<Record<string, number>>;
  readonly redisKeys: number;
  /** Keys with no TTL: what would grow without bound (keys with a TTL clean themselves up). */
  readonly persistentKeys: number;
  readonly pgConnections: number;
}

/** RSS of `pid` in MiB (VmRSS), or NaN when it is gone. */
export function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

/** Open file descriptors (sockets, files, pipes) of `pid`: the open handles an operator sees. */
export function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return Number.NaN;
  }
}

/** Redis keys (DBSIZE) and PostgreSQL client backends of the soak's own instances. */
export async function storeCounts(
  redisUrl: string,
  pgUrl: string,
): Promise<{ redisKeys: number; persistentKeys: number; pgConnections: number }> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  const pool = new Pool({ connectionString: pgUrl, max: 1 });
  try {
    const redisKeys = await redis.dbsize();
    let persistentKeys = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      const ttls = await Promise.all(keys.map((key) => redis.pttl(key)));
      persistentKeys += ttls.filter((ttl) => ttl === -1).length;
    } while (cursor !== '0');
    const { rows } = await pool.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
    );
    return { redisKeys, persistentKeys, pgConnections: Number(rows[0]?.n ?? 0) };
  } finally {
    redis.disconnect();
    await pool.end();
  }
}

/** Least-squares slope of `points` (y per unit of x); 0 for fewer than two points. */
export function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Key counts by shape (hex ids, numbers and UUID-like parts replaced by `*`), largest first: what a growing key count is made of. */
export async function keyShapes(redisUrl: string, top = 8): Promise<Array<[string, number]>> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  const counts = new Map<string, number>();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const shape = key.replace(/\{[^}]*\}/g, '*').replace(/:once:([a-z-]+):.*/, ':once:$1:*');
        counts.set(shape, (counts.get(shape) ?? 0) + 1);
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, top);
}
