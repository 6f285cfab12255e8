import { SignJWT } from 'jose';
import { LoginTokens } from './login-token';
import { openGatewayTestDb, type GatewayTestDb } from './auth-db.test-support';

/** Login tokens (JWT HS256) and the instance secret kept in the gateway's schema (real PostgreSQL). */
let db: GatewayTestDb;
beforeAll(async () => {
  db = await openGatewayTestDb('login_token');
});
afterAll(() => db.close());

const claims = {
  userId: '0b0e5c6a-0000-4000-8000-000000000001',
  username: 'alice',
  role: 'developer',
  tokenVersion: 3,
} as const;
const identity = { userId: claims.userId, tokenVersion: 3, tokenId: expect.any(String), expiresAt: expect.any(Number) };

describe('LoginTokens', () => {
  it('issues a token that verifies to its claims, expiring after the ttl', async () => {
    const tokens = await LoginTokens.create({
      secret: 'a-configured-secret-of-enough-length',
      ttlSeconds: 3600,
      pool: db.pool,
    });
    const before = Date.now();
    const { token, expiresAt } = await tokens.issue(claims);
    expect(token.split('.')).toHaveLength(3);
    expect(Date.parse(expiresAt) - before).toBeGreaterThan(3590_000);
    expect(Date.parse(expiresAt) - before).toBeLessThanOrEqual(3601_000);
    expect(await tokens.verify(token)).toEqual(identity);
  });

  it('refuses an expired token, a tampered one, one signed with another secret, and garbage', async () => {
    const tokens = await LoginTokens.create({
      secret: 'secret-one-secret-one-secret-one',
      ttlSeconds: 3600,
      pool: db.pool,
    });
    const other = await LoginTokens.create({
      secret: 'secret-two-secret-two-secret-two',
      ttlSeconds: 3600,
      pool: db.pool,
    });
    const expired = await LoginTokens.create({
      secret: 'secret-one-secret-one-secret-one',
      ttlSeconds: -10,
      pool: db.pool,
    });
    const { token } = await tokens.issue(claims);
    const [header = '', payload = '', signature = ''] = token.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), role: 'admin' }),
    ).toString('base64url');
    expect(await tokens.verify((await expired.issue(claims)).token)).toBeUndefined();
    expect(await tokens.verify(`${header}.${forged}.${signature}`)).toBeUndefined();
    expect(await other.verify(token)).toBeUndefined();
    expect(await tokens.verify('not.a.jwt')).toBeUndefined();
    expect(await tokens.verify('')).toBeUndefined();
  });

  it('refuses a well-signed token with another issuer, another audience or none, no version, or no subject', async () => {
    const secret = 'shared-secret-shared-secret-shared';
    const tokens = await LoginTokens.create({ secret, ttlSeconds: 3600, pool: db.pool });
    const key = new TextEncoder().encode(secret);
    const sign = (payload: Record<string, unknown>, issuer: string, subject?: string, audience?: string) => {
      let jwt = new SignJWT(payload)
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(issuer)
        .setJti('t1')
        .setIssuedAt()
        .setExpirationTime('1h');
      if (audience !== undefined) jwt = jwt.setAudience(audience);
      return (subject === undefined ? jwt : jwt.setSubject(subject)).sign(key);
    };
    const aud = 'dagu-mcp:login';
    expect(await tokens.verify(await sign({ ver: 0 }, 'dagu-mcp', 'u1', aud))).toEqual({
      userId: 'u1',
      tokenVersion: 0,
      tokenId: 't1',
      expiresAt: expect.any(Number),
    });
    expect(await tokens.verify(await sign({ ver: 0 }, 'someone-else', 'u1', aud))).toBeUndefined();
    expect(await tokens.verify(await sign({ ver: 0 }, 'dagu-mcp', 'u1', 'dagu-mcp:oauth'))).toBeUndefined();
    expect(await tokens.verify(await sign({ ver: 0 }, 'dagu-mcp', 'u1'))).toBeUndefined();
    expect(await tokens.verify(await sign({}, 'dagu-mcp', 'u1', aud))).toBeUndefined();
    expect(await tokens.verify(await sign({ ver: 0 }, 'dagu-mcp', undefined, aud))).toBeUndefined();
  });

  it('without a configured secret, generates one in settings that every replica shares', async () => {
    const first = await LoginTokens.create({ secret: undefined, ttlSeconds: 60, pool: db.pool });
    const second = await LoginTokens.create({ secret: undefined, ttlSeconds: 60, pool: db.pool });
    const { rows } = await db.pool.query<{ value: string }>("SELECT value FROM settings WHERE key = 'token_secret'");
    expect(rows).toHaveLength(1);
    expect(rows[0]?.value.length).toBeGreaterThanOrEqual(64);
    expect(await second.verify((await first.issue(claims)).token)).toEqual(identity);
  });
});
