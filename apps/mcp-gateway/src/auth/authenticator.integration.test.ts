import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { DaguError } from '@dagu-mcp/contracts';
import { createLogger, generateKeyText, parseKeyRing, SecretBox } from '@dagu-mcp/runtime';
import { ApiKeyVerifier } from './api-key-cache';
import { ApiKeyRepository } from './api-key.repository';
import { openGatewayTestDb, type GatewayTestDb } from './auth-db.test-support';
import { Authenticator, safeEqual, TooManyFailures, type AuthMode } from './authenticator';
import { FailureLimiter } from './failure-limiter';
import { LoginTokens } from './login-token';
import { hashPassword } from './password';
import { UserRepository } from './user.repository';

/**
 * The authenticator over its real parts (020 §Authentication): users and API
 * keys in PostgreSQL (a schema of its own), the key cache and the failure
 * limit in Redis (a prefix of its own), login tokens signed for real.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `authn-test-${randomBytes(4).toString('hex')}`;
let db: GatewayTestDb;
let redis: Redis;
let subscriber: Redis;
let users: UserRepository;
let apiKeys: ApiKeyRepository;
let verifier: ApiKeyVerifier;
let tokens: LoginTokens;
let aliceId: string;
let limiterCount = 0;

beforeAll(async () => {
  db = await openGatewayTestDb('authn');
  redis = new Redis(REDIS_URL);
  subscriber = new Redis(REDIS_URL);
  users = new UserRepository(db.pool);
  apiKeys = new ApiKeyRepository(db.pool);
  verifier = new ApiKeyVerifier({
    repository: apiKeys,
    publisher: redis,
    subscriber,
    channel: `${prefix}:revoked`,
    logger: createLogger({ name: 'authn-test', level: 'silent' }),
  });
  await verifier.start();
  tokens = await LoginTokens.create({
    secret: 'authenticator-test-secret-0123456789',
    ttlSeconds: 600,
    pool: db.pool,
    box: new SecretBox(parseKeyRing(generateKeyText())),
  });
  aliceId = (
    await users.create({ username: 'alice', role: 'developer', passwordHash: await hashPassword('alice-pass') })
  ).id;
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  subscriber.disconnect();
  await db.close();
});

/** An authenticator in `mode` with a failure limit of its own (3 per address, 2 per username). */
function authenticator(mode: AuthMode): Authenticator {
  limiterCount += 1;
  const limiter = new FailureLimiter({
    redis,
    prefix: `${prefix}:${limiterCount}`,
    perUser: 2,
    perAddress: 3,
    windowSeconds: 60,
  });
  return new Authenticator({
    mode,
    users,
    apiKeys: verifier,
    tokens,
    limiter,
    basic: { username: 'root', password: 'root-pass' },
  });
}

const basic = (username: string, password: string) => ({ scheme: 'basic' as const, username, password });
const bearer = (token: string) => ({ scheme: 'bearer' as const, token });

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DaguError) return err.code;
    if (err instanceof TooManyFailures) return `too_many_failures after ${err.retryAfterSeconds}s`;
    throw err;
  }
  return 'none';
}

describe('Authenticator', () => {
  it('mode none: everyone is the anonymous principal, and no challenge is sent', async () => {
    const none = authenticator('none');
    expect((await none.authenticate(undefined, '10.0.0.1')).principal).toMatchObject({ credentialType: 'none' });
    expect(none.challenges()).toEqual([]);
  });

  it('builtin: a user by password (Basic) and by login token (Bearer)', async () => {
    const builtin = authenticator('builtin');
    expect(builtin.challenges()).toEqual(['Bearer realm="dagu"', 'Basic realm="dagu", charset="UTF-8"']);
    expect(await builtin.authenticate(basic('alice', 'alice-pass'), '10.0.1.1')).toEqual({
      principal: { id: `user:${aliceId}`, subject: 'alice', role: 'developer', credentialType: 'basic' },
    });
    const { token } = await tokens.issue({ userId: aliceId, username: 'alice', role: 'developer' });
    expect(await builtin.authenticate(bearer(token), '10.0.1.1')).toEqual({
      principal: { id: `user:${aliceId}`, subject: 'alice', role: 'developer', credentialType: 'token' },
    });
  });

  it('an API key (Bearer dagu_…) in any mode but none, with its surfaces; revoked or wrong keys fail', async () => {
    const { record, key } = await apiKeys.create({
      name: 'ci',
      role: 'operator',
      surfaces: ['rest_api'],
      expiresAt: null,
      createdBy: 'user:admin',
    });
    for (const mode of ['builtin', 'basic'] as const) {
      expect(await authenticator(mode).authenticate(bearer(key), '10.0.2.1')).toEqual({
        principal: { id: `api_key:${record.id}`, subject: 'api_key:ci', role: 'operator', credentialType: 'api_key' },
        surfaces: ['rest_api'],
      });
    }
    const builtin = authenticator('builtin');
    expect(await codeOf(builtin.authenticate(bearer(`${key.slice(0, -1)}x`), '10.0.2.2'))).toBe('unauthenticated');
    await apiKeys.revoke(record.id);
    await verifier.invalidate(record.prefix);
    expect(await codeOf(builtin.authenticate(bearer(key), '10.0.2.2'))).toBe('unauthenticated');
  });

  it('an expired API key fails', async () => {
    const { key } = await apiKeys.create({
      name: 'old',
      role: 'viewer',
      surfaces: ['mcp'],
      expiresAt: new Date(Date.now() - 1000),
      createdBy: 'user:admin',
    });
    expect(await codeOf(authenticator('builtin').authenticate(bearer(key), '10.0.3.1'))).toBe('unauthenticated');
  });

  it('basic mode: only the configured user (admin), and login tokens are not accepted', async () => {
    const basicMode = authenticator('basic');
    expect(await basicMode.authenticate(basic('root', 'root-pass'), '10.0.4.1')).toEqual({
      principal: { id: 'user:root', subject: 'root', role: 'admin', credentialType: 'basic' },
    });
    expect(await codeOf(basicMode.authenticate(basic('alice', 'alice-pass'), '10.0.4.1'))).toBe('unauthenticated');
    const { token } = await tokens.issue({ userId: aliceId, username: 'alice', role: 'developer' });
    expect(await codeOf(basicMode.authenticate(bearer(token), '10.0.4.1'))).toBe('unauthenticated');
  });

  it.each([
    ['no credential', undefined],
    ['a malformed header', 'malformed' as const],
    ['a wrong password', basic('alice', 'nope')],
    ['an unknown user', basic('mallory', 'alice-pass')],
    ['a garbage token', bearer('eyJnot.a.token')],
  ])('builtin refuses %s with unauthenticated', async (_label, credential) => {
    expect(await codeOf(authenticator('builtin').authenticate(credential, '10.0.5.1'))).toBe('unauthenticated');
  });

  it('counts failures: a username over its limit is refused even with the right password, from any address', async () => {
    const builtin = authenticator('builtin');
    await codeOf(builtin.authenticate(basic('alice', 'x'), '10.0.6.1'));
    await codeOf(builtin.authenticate(basic('alice', 'y'), '10.0.6.2'));
    expect(await codeOf(builtin.authenticate(basic('alice', 'alice-pass'), '10.0.6.3'))).toMatch(
      /^too_many_failures after \d+s$/,
    );
  });

  it('counts failures: an address over its limit is refused for bearer credentials too', async () => {
    const builtin = authenticator('builtin');
    for (let i = 0; i < 3; i += 1) await codeOf(builtin.authenticate(bearer(`dagu_wrong${i}`), '10.0.7.1'));
    const { token } = await tokens.issue({ userId: aliceId, username: 'alice', role: 'developer' });
    // A fresh authenticator has no memo of the address being clear.
    const again = new Authenticator({
      mode: 'builtin',
      users,
      apiKeys: verifier,
      tokens,
      limiter: new FailureLimiter({
        redis,
        prefix: `${prefix}:${limiterCount}`,
        perUser: 2,
        perAddress: 3,
        windowSeconds: 60,
      }),
    });
    expect(await codeOf(again.authenticate(bearer(token), '10.0.7.1'))).toMatch(/^too_many_failures/);
    expect((await again.authenticate(bearer(token), '10.0.7.2')).principal.subject).toBe('alice');
  });
});

describe('safeEqual', () => {
  it.each([
    ['a', 'a', true],
    ['a', 'b', false],
    ['', '', true],
    ['short', 'a much longer string', false],
  ])('%p vs %p: %p', (a, b, expected) => {
    expect(safeEqual(a, b)).toBe(expected);
  });
});
