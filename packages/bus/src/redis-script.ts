import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

const shas = new Map<string, string>();

/**
 * Runs a Lua script by its SHA1 (`EVALSHA`), sending the script text only
 * when Redis does not know it yet (`NOSCRIPT`, e.g. after a restart). Saves
 * Redis from re-hashing the script on every hot-path call.
 *
 * @param args - the `numKeys` keys, then the script's ARGV.
 * @returns the script's reply.
 * @throws the Redis error (connection down: ioredis's error).
 */
export async function evalScript(
  redis: Redis,
  script: string,
  numKeys: number,
  ...args: Array<string | number>
): Promise<unknown> {
  let sha = shas.get(script);
  if (sha === undefined) {
    sha = createHash('sha1').update(script).digest('hex');
    shas.set(script, sha);
  }
  try {
    return await redis.evalsha(sha, numKeys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return redis.eval(script, numKeys, ...args);
  }
}
