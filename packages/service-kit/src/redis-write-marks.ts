import type { Redis } from 'ioredis';
import type { WriteMarks } from '@dagu-mcp/runtime';

/**
 * The callers' write positions in Redis, shared by every replica of every
 * service (they all write one PostgreSQL database, one WAL), so a read after a
 * change reaches the primary whichever service or replica serves it (docs/decisions.md "Reads from a replica: the lag bound and read-your-writes").
 *
 * One key per caller, `<prefix>:read-mark:<principal id>`, holding the highest
 * LSN as 16 hex digits (string order is number order, so the compare-and-set
 * script needs no 64-bit arithmetic) and expiring after the router's mark TTL.
 */
const RECORD_SCRIPT = `
local held = redis.call('GET', KEYS[1])
if (not held) or held < ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1`;

/** {@link WriteMarks} on Redis (see the module comment). */
export class RedisWriteMarks implements WriteMarks {
  /**
   * @param redis   a connection that fails fast while Redis is down (`maxRetriesPerRequest: 1`)
   * @param prefix  the bus prefix (`BUS_PREFIX`)
   */
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** The caller's highest unexpired write LSN. @throws when Redis cannot answer */
  async latest(caller: string): Promise<bigint | undefined> {
    const held = await this.redis.get(this.keyOf(caller));
    return held === null ? undefined : BigInt(`0x${held}`);
  }

  /** Keeps `lsn` for `caller` for `ttlMs` unless a higher one is held (whose TTL is renewed). @throws when Redis cannot answer */
  async record(caller: string, lsn: bigint, ttlMs: number): Promise<void> {
    await this.redis.eval(RECORD_SCRIPT, 1, this.keyOf(caller), lsn.toString(16).padStart(16, '0'), String(ttlMs));
  }

  private keyOf(caller: string): string {
    return `${this.prefix}:read-mark:${caller}`;
  }
}
