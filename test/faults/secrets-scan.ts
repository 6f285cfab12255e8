/**
 * The secrets scan (issue 18; CONTRIBUTING "Errors": secrets never reach a
 * log line, a job payload, an error message or an audit row): after a run,
 * every process's log output, every key and value of the run's Redis
 * (strings, hashes, lists, sets, sorted sets and streams — BullMQ job
 * payloads are hashes, the MCP event log is streams) are searched for
 *
 * - the secrets the run planted (passwords, API keys, login tokens, the
 *   token secret, the database password), verbatim, and
 * - shapes of secrets whatever their value: a URL with a password
 *   (`DATABASE_URL`), an `Authorization` or `Bearer` credential, a
 *   `password` or `token` field with a value, an API key (`dagu_…`) or a
 *   JWT, an OAuth `code=` parameter.
 *
 * A finding names where it was found and a redacted excerpt, never the secret.
 */
import { Redis } from 'ioredis';

/** One place a secret was found. */
export interface SecretFinding {
  /** `log:<app>` or `redis:<key>`. */
  readonly where: string;
  /** Which rule matched (`planted:<label>` or a shape name). */
  readonly rule: string;
}

/** Shapes of secrets, whatever their value. */
const SHAPES: ReadonlyArray<readonly [string, RegExp]> = [
  ['url-with-password', /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@"']+:[^\s@/"']+@/i],
  ['authorization-header', /"authorization"\s*:\s*"(?!\[Redacted\])[^"]+"/i],
  ['bearer-credential', /\bBearer\s+(?!\[Redacted\])[A-Za-z0-9._~+/-]{16,}/],
  ['password-field', /"(password|passwd|newPassword)"\s*:\s*"(?!\[Redacted\])[^"]+"/i],
  ['token-field', /"(token|loginToken|apiKey|api_key|secret|tokenSecret)"\s*:\s*"(?!\[Redacted\])[^"]{8,}"/i],
  ['jwt', /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/],
  ['oauth-code', /[?&]code=[A-Za-z0-9._~-]{8,}/],
];

/** Finds planted secrets and secret shapes in `text` (from `where`). */
export function scanText(where: string, text: string, planted: Readonly<Record<string, string>>): SecretFinding[] {
  const findings: SecretFinding[] = [];
  for (const [label, secret] of Object.entries(planted))
    if (secret.length >= 6 && text.includes(secret)) findings.push({ where, rule: `planted:${label}` });
  for (const [rule, pattern] of SHAPES) if (pattern.test(text)) findings.push({ where, rule });
  return findings;
}

/** Every value of a Redis key as text (all fields and members, in any order). */
async function valueOf(redis: Redis, key: string): Promise<string> {
  const type = await redis.type(key);
  if (type === 'string') return (await redis.get(key)) ?? '';
  if (type === 'hash') return JSON.stringify(await redis.hgetall(key));
  if (type === 'list') return JSON.stringify(await redis.lrange(key, 0, -1));
  if (type === 'set') return JSON.stringify(await redis.smembers(key));
  if (type === 'zset') return JSON.stringify(await redis.zrange(key, 0, -1));
  if (type === 'stream') return JSON.stringify(await redis.xrange(key, '-', '+'));
  return '';
}

/** Scans every key (name and value) of the Redis at `url` matching `pattern` (default: all). */
export async function scanRedis(
  url: string,
  planted: Readonly<Record<string, string>>,
  pattern = '*',
): Promise<{ keys: number; findings: SecretFinding[] }> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  const findings: SecretFinding[] = [];
  let keys = 0;
  try {
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      for (const key of batch) {
        keys++;
        findings.push(...scanText(`redis:${key}`, `${key}\n${await valueOf(redis, key)}`, planted));
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return { keys, findings };
}

/** Scans a stack's combined output (`[app] line` per chunk, test/e2e/stack.ts) app by app. */
export function scanLogs(output: string, planted: Readonly<Record<string, string>>): SecretFinding[] {
  const byApp = new Map<string, string[]>();
  let app = 'unknown';
  for (const line of output.split('\n')) {
    app = /^\[([a-z-]+)\]/.exec(line)?.[1] ?? app;
    const lines = byApp.get(app) ?? [];
    lines.push(line);
    byApp.set(app, lines);
  }
  return [...byApp].flatMap(([app, lines]) => scanText(`log:${app}`, lines.join('\n'), planted));
}
