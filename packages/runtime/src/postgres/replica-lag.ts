import type { Pool } from 'pg';

/**
 * How far a streaming replica is behind its primary (docs/decisions.md
 * "Reads from a replica: the lag bound and read-your-writes").
 *
 * The primary's WAL position is sampled first, the replica's replay position
 * after it: a replica whose replay LSN has reached the sampled one has replayed
 * every commit made before the probe, and its lag is 0. Otherwise the lag is the
 * age of the newest transaction it replayed (`now() - pg_last_xact_replay_timestamp()`):
 * everything committed since then is missing, so that is how stale its reads are
 * at most. (An idle primary with a caught-up replica reads as 0, not as the age
 * of its last commit.) Both clocks are compared on the replica: primary and
 * replica must keep their clocks in step (NTP), as PostgreSQL's own lag views assume.
 */

/** A WAL position (`X/Y` hex, PostgreSQL's `pg_lsn` text) as a number, for comparison. */
export function lsnValue(lsn: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(lsn);
  if (match === null) throw new Error(`not a pg_lsn: ${lsn}`);
  return (BigInt(`0x${match[1] ?? '0'}`) << 32n) | BigInt(`0x${match[2] ?? '0'}`);
}

/** What one probe found. `usable` is false when the server is no replica (promoted, or the primary itself). */
export interface ReplicaLag {
  /** The replica is in recovery (a standby) and answered. */
  readonly usable: boolean;
  /** Its replay position (`pg_last_wal_replay_lsn()`), as {@link lsnValue}; 0 when unknown. */
  readonly replayLsn: bigint;
  /** How stale its reads may be, ms (0 when caught up; `Infinity` when unknown). */
  readonly lagMs: number;
}

const PRIMARY_LSN_SQL = 'SELECT pg_current_wal_lsn()::text AS lsn';
const REPLICA_SQL = `SELECT pg_is_in_recovery() AS recovery,
  pg_last_wal_replay_lsn()::text AS replay,
  (extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::float8 AS age_ms`;

/** The primary's current WAL write position (`pg_current_wal_lsn()`), as {@link lsnValue}. */
export async function primaryLsn(primary: Pool): Promise<bigint> {
  const { rows } = await primary.query<{ lsn: string }>(PRIMARY_LSN_SQL);
  return lsnValue(rows[0]?.lsn ?? '0/0');
}

/**
 * Measures the replica's lag against the primary (see the module comment): two
 * one-row queries, the primary's first.
 *
 * @throws what pg throws when either server cannot be reached (the caller treats the replica as down)
 */
export async function measureReplicaLag(primary: Pool, replica: Pool): Promise<ReplicaLag> {
  const target = await primaryLsn(primary);
  const { rows } = await replica.query<{ recovery: boolean; replay: string | null; age_ms: number | null }>(
    REPLICA_SQL,
  );
  const row = rows[0];
  if (row?.recovery !== true || row.replay === null) return { usable: false, replayLsn: 0n, lagMs: Infinity };
  const replayLsn = lsnValue(row.replay);
  if (replayLsn >= target) return { usable: true, replayLsn, lagMs: 0 };
  return { usable: true, replayLsn, lagMs: row.age_ms === null ? Infinity : Math.max(0, row.age_ms) };
}
