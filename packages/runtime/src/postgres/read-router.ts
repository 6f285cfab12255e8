import type { Pool } from 'pg';
import { DaguError } from '@dagu-mcp/contracts';
import type { Logger } from '../logging/logger';
import { classifyPgFailure, pgErrorCode } from './pg-errors';
import { measureReplicaLag, primaryLsn, type ReplicaLag } from './replica-lag';

/**
 * Reads that tolerate lag, served by a streaming replica (`DATABASE_READ_URL`; docs/decisions.md "Reads from a replica: the lag bound and
 * read-your-writes"). A read goes to the replica only when all of these hold,
 * else to the primary:
 *
 * - the replica answered the last lag probe (cached `checkMs`), is in recovery,
 *   and is at most `maxLagMs` behind (replica-lag.ts);
 * - the caller has no write the replica has not replayed: after a mutation the
 *   service records the primary's WAL position for the caller (`noteWrite`, in
 *   {@link WriteMarks} shared by every replica of every service); a read of that
 *   caller goes to the primary until the probed replay LSN has passed it;
 * - the read itself does not decline the replica's answer ({@link ReplicaDeclined}:
 *   a run that is still running is read from the primary).
 *
 * A replica that fails a read (down, restarting, a recovery conflict) is left
 * alone until the next probe and the read is re-run on the primary: the caller
 * sees the primary's answer, never the replica's outage. Writes and
 * transactions never come here: they use the primary pool directly.
 */

/** Where each caller's latest write position is kept (the Redis one: service-kit's `RedisWriteMarks`). */
export interface WriteMarks {
  /** The highest WAL position (see `lsnValue`) recorded for `caller` and not yet expired, if any. */
  latest(caller: string): Promise<bigint | undefined>;
  /** Records `lsn` for `caller` (kept if higher than the one held) for `ttlMs`. */
  record(caller: string, lsn: bigint, ttlMs: number): Promise<void>;
}

/** Thrown by a read run on the replica to have it re-run on the primary (e.g. the run it found is not ended). */
export class ReplicaDeclined extends Error {
  constructor(reason: string) {
    super(`replica answer declined: ${reason}`);
    this.name = 'ReplicaDeclined';
  }
}

/** Which server served a read. */
export type ReadSource = 'replica' | 'primary';

/** {@link ReadRouter} settings. */
export interface ReadRouterOptions {
  /** The service's pool: writes, transactions and fallback reads. */
  readonly primary: Pool;
  /** The replica's pool (`DATABASE_READ_URL`); unset: every read goes to the primary. */
  readonly replica?: Pool | undefined;
  /** The callers' write positions; unset: every read of a named caller goes to the primary. */
  readonly marks?: WriteMarks | undefined;
  /** `DB_READ_MAX_LAG_MS`: the staleness bound past which reads fall back to the primary, ms. */
  readonly maxLagMs: number;
  /** `DB_READ_CHECK_MS`: how long one lag probe is trusted, ms. */
  readonly checkMs: number;
  /** A probe that has not answered in this long counts as "replica down", ms. Default 1000. */
  readonly probeTimeoutMs?: number;
  readonly logger: Logger;
}

const DOWN: ReplicaLag = { usable: false, replayLsn: 0n, lagMs: Infinity };
/** A standby cancelled the read for a recovery conflict (SQLSTATE 40001 on a hot standby). */
const RECOVERY_CONFLICT = '40001';

/**
 * A failure of the replica rather than of the read: out of reach, shutting
 * down, a recovery conflict, or a store's `resource_unavailable` made of one
 * (services classify their storage errors inside the read).
 */
function isReplicaFailure(err: unknown): boolean {
  if (err instanceof DaguError) return err.code === 'resource_unavailable';
  return classifyPgFailure(err) === 'unavailable' || pgErrorCode(err) === RECOVERY_CONFLICT;
}

/** Routes lag-tolerant reads between a replica and the primary (see the module comment). */
export class ReadRouter {
  private lag: ReplicaLag = DOWN;
  private lagAt = -Infinity;
  private probing: Promise<ReplicaLag> | undefined;
  private lastUsable: boolean | undefined;
  /** Reads served so far, by source (tests, bench, logs). */
  readonly served: Record<ReadSource, number> = { replica: 0, primary: 0 };

  constructor(private readonly options: ReadRouterOptions) {}

  /** True when a replica is configured. */
  get hasReplica(): boolean {
    return this.options.replica !== undefined;
  }

  /** How long a caller's write position is kept: past it, the lag bound alone guarantees the write is visible. */
  get markTtlMs(): number {
    return this.options.maxLagMs + this.options.checkMs + 1000;
  }

  /**
   * Runs `read` on the replica when the rules of the module comment allow,
   * else (or when the replica fails it, or it throws {@link ReplicaDeclined}) on the primary.
   *
   * @param caller  the principal id whose writes the read must see (the bus job's `principal.id`); unset: none
   * @param read    the query/queries; called at most twice (replica, then primary)
   * @throws what `read` throws on the primary, or a non-outage error it throws on the replica
   */
  async read<T>(caller: string | undefined, read: (db: Pool, source: ReadSource) => Promise<T>): Promise<T> {
    const replica = this.options.replica;
    if (replica === undefined || !(await this.replicaFits(caller))) return this.onPrimary(read);
    try {
      const result = await read(replica, 'replica');
      this.served.replica++;
      return result;
    } catch (err) {
      if (err instanceof ReplicaDeclined) return this.onPrimary(read);
      if (!isReplicaFailure(err)) throw err;
      this.options.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'replica read failed');
      this.setLag(DOWN);
      return this.onPrimary(read);
    }
  }

  /**
   * Records the primary's WAL position for `caller` after its mutation
   * committed, so its next reads see it. A failure is logged, never thrown
   * (the mutation stands); the caller's marks store is then down too, and its
   * reads go to the primary while it is.
   */
  async noteWrite(caller: string): Promise<void> {
    const marks = this.options.marks;
    if (this.options.replica === undefined || marks === undefined) return;
    try {
      await marks.record(caller, await primaryLsn(this.options.primary), this.markTtlMs);
    } catch (err) {
      this.options.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'write mark not recorded');
    }
  }

  /** The last probe's answer, probing when it is older than `checkMs` (one probe at a time). */
  async replicaLag(): Promise<ReplicaLag> {
    if (Date.now() - this.lagAt < this.options.checkMs) return this.lag;
    this.probing ??= this.probe().finally(() => {
      this.probing = undefined;
    });
    return this.probing;
  }

  /** Ends the replica's pool (the primary's belongs to its owner). */
  async close(): Promise<void> {
    await this.options.replica?.end();
  }

  private async replicaFits(caller: string | undefined): Promise<boolean> {
    const lag = await this.replicaLag();
    if (!lag.usable || lag.lagMs > this.options.maxLagMs) return false;
    if (caller === undefined) return true;
    if (this.options.marks === undefined) return false;
    try {
      const mark = await this.options.marks.latest(caller);
      return mark === undefined || mark <= lag.replayLsn;
    } catch {
      return false; // the caller's writes cannot be checked: the primary has them
    }
  }

  private async onPrimary<T>(read: (db: Pool, source: ReadSource) => Promise<T>): Promise<T> {
    const result = await read(this.options.primary, 'primary');
    this.served.primary++;
    return result;
  }

  private async probe(): Promise<ReplicaLag> {
    const replica = this.options.replica;
    if (replica === undefined) return DOWN;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<ReplicaLag>((resolve) => {
      timer = setTimeout(() => resolve(DOWN), this.options.probeTimeoutMs ?? 1000);
    });
    const measured = measureReplicaLag(this.options.primary, replica).catch((err: unknown) => {
      this.options.logger.debug({ err: err instanceof Error ? err.message : String(err) }, 'replica probe failed');
      return DOWN;
    });
    const lag = await Promise.race([measured, timeout]);
    clearTimeout(timer);
    this.setLag(lag);
    return lag;
  }

  private setLag(lag: ReplicaLag): void {
    this.lag = lag;
    this.lagAt = Date.now();
    const usable = lag.usable && lag.lagMs <= this.options.maxLagMs;
    if (usable !== this.lastUsable) {
      this.lastUsable = usable;
      const fields = { lagMs: Number.isFinite(lag.lagMs) ? Math.round(lag.lagMs) : null };
      if (usable) this.options.logger.info(fields, 'reads served by the replica');
      else this.options.logger.warn(fields, 'replica down or behind: reads served by the primary');
    }
  }
}
