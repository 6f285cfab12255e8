import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { DaguError } from '@dagu-mcp/contracts';
import { createLogger, generateKeyText, parseKeyRing, SecretBox } from '@dagu-mcp/runtime';
import { ApiKeyVerifier } from './api-key-cache';
import { ApiKeyRepository } from './api-key.repository';
import { openGatewayTestDb, type GatewayTestDb } from './auth-db.test-support';
import { Authenticator, safeEqual, TooManyFailures, type AuthMode } from './authenticator';
import { FailureLimiter } from './failure-limiter';
import { LoginSessions } from './login-sessions';
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
let sessions: LoginSessions;
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
  sessions = new LoginSessions({
    tokens,
    repository: users,
    publisher: redis,
    subscriber,
    prefix,
    logger: createLogger({ name: 'authn-test', level: 'silent' }),
  });
  await sessions.start();
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
    sessions,
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
    const { token } = await tokens.issue({ userId: aliceId, username: 'alice', role: 'developer', tokenVersion: 0 });
    expect(await builtin.authenticate(bearer(token), '10.0.1.1')).toEqual({
      principal: { id: `user:${aliceId}`, subject: 'alice', role: 'developer', credentialType: 'token' },
      loginToken: { tokenId: expect.any(String), expiresAt: expect.any(Number) },
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
    const { token } = await tokens.issue({ userId: aliceId, username: 'alice', role: 'developer', tokenVersion: 0 });
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

  it('counts failures per username and address: that pair is refused, the right password from a clean address passes', async () => {
    const builtin = authenticator('builtin');
    await codeOf(builtin.authenticate(basic('alice', 'x'), '10.0.6.1'));
    await codeOf(builtin.authenticate(basic('alice', 'y'), '10.0.6.1'));
    expect(await codeOf(builtin.authenticate(basic('alice', 'alice-pass'), '10.0.6.1'))).toMatch(
      /^too_many_failures after \d+s$/,
    );
    expect((await builtin.authenticate(basic('alice', 'alice-pass'), '10.0.6.3')).principal.subject).toBe('alice');
  });

  it('counts failures: an address over its limit is refused for bearer credentials too', async () => {
    const builtin = authenticator('builtin');
    for (let i = 0; i < 3; i += 1) await codeOf(builtin.authenticate(bearer(`dagu_wrong${i}`), '10.0.7.1'));
    const { token } = await tokens.issue({ userId: aliceId, username: 'alice', role: 'developer', tokenVersion: 0 });
    // A fresh authenticator has no memo of the address being clear.
    const again = new Authenticator({
      mode: 'builtin',
      users,
      apiKeys: verifier,
      sessions,
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

describe('a revoked key on another replica', () => {
  /** A second replica's verifier: its own subscriber, the same channel; `gate` holds its database lookups. */
  async function replica(gate?: Promise<void>): Promise<{ verifier: ApiKeyVerifier; close: () => void }> {
    const ownSubscriber = new Redis(REDIS_URL);
    const other = new ApiKeyVerifier({
      repository: {
        findByPrefix: async (keyPrefix) => {
          const found = await apiKeys.findByPrefix(keyPrefix);
          await gate;
          return found;
        },
        touch: (id) => apiKeys.touch(id),
      },
      publisher: redis,
      subscriber: ownSubscriber,
      channel: `${prefix}:revoked`,
      logger: createLogger({ name: 'authn-test-b', level: 'silent' }),
    });
    await other.start();
    return { verifier: other, close: () => ownSubscriber.disconnect() };
  }

  const newKey = (name: string) =>
    apiKeys.create({ name, role: 'viewer', surfaces: ['mcp'], expiresAt: null, createdBy: 'user:admin' });

  it('is refused there as soon as invalidate() resolves here', async () => {
    const b = await replica();
    try {
      for (let round = 0; round < 20; round += 1) {
        const { record, key } = await newKey(`b-${round}`);
        expect(await b.verifier.verify(key)).toMatchObject({ id: record.id });
        await apiKeys.revoke(record.id);
        await verifier.invalidate(record.prefix);
        expect(await b.verifier.verify(key)).toBeUndefined();
      }
    } finally {
      b.close();
    }
  });

  it('a lookup in flight during the revocation does not cache what it read before it', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const b = await replica(gate);
    try {
      const { record, key } = await newKey('in-flight');
      const inFlight = b.verifier.verify(key);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await apiKeys.revoke(record.id);
      await verifier.invalidate(record.prefix);
      release();
      expect(await inFlight).toMatchObject({ id: record.id });
      expect(await b.verifier.verify(key)).toBeUndefined();
    } finally {
      b.close();
    }
  });
});

describe('login tokens follow the user (docs/security.md "Role boundaries", item 4)', () => {
  it('takes the live role, and ends on a new password, a delete or a logout', async () => {
    const bob = await users.create({ username: 'bob', role: 'admin', passwordHash: await hashPassword('bob-pass') });
    const builtin = authenticator('builtin');
    const issue = async () =>
      (await tokens.issue({ userId: bob.id, username: 'bob', role: 'admin', tokenVersion: 0 })).token;
    const token = await issue();
    expect((await builtin.authenticate(bearer(token), '10.0.8.1')).principal.role).toBe('admin');
    await users.update(bob.id, { role: 'viewer' });
    await sessions.userChanged(bob.id);
    expect((await builtin.authenticate(bearer(token), '10.0.8.1')).principal.role).toBe('viewer');
    const second = await issue();
    const session = await sessions.resolve(second);
    expect(session).toBeDefined();
    await sessions.logOut(session?.tokenId ?? '', session?.expiresAt ?? 0);
    expect(await codeOf(builtin.authenticate(bearer(second), '10.0.8.2'))).toBe('unauthenticated');
    expect((await builtin.authenticate(bearer(token), '10.0.8.1')).principal.role).toBe('viewer');
    await users.update(bob.id, { passwordHash: await hashPassword('bob-new-pass') });
    await sessions.userChanged(bob.id);
    expect(await codeOf(builtin.authenticate(bearer(token), '10.0.8.3'))).toBe('unauthenticated');
    const third = (await tokens.issue({ userId: bob.id, username: 'bob', role: 'viewer', tokenVersion: 1 })).token;
    expect((await builtin.authenticate(bearer(third), '10.0.8.4')).principal.subject).toBe('bob');
    await users.delete(bob.id);
    await sessions.userChanged(bob.id);
    expect(await codeOf(builtin.authenticate(bearer(third), '10.0.8.5'))).toBe('unauthenticated');
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
