import { SignJWT } from 'jose';
import { generateKeyText, parseKeyRing, SecretBox } from '@dagu-mcp/runtime';
import { LoginTokens } from './login-token';
import { TOKEN_SECRET_PURPOSE } from './token-secret';
import { openGatewayTestDb, type GatewayTestDb } from './auth-db.test-support';

/** Login tokens (JWT HS256) and the instance secret kept in the gateway's schema (real PostgreSQL). */
let db: GatewayTestDb;
beforeAll(async () => {
  db = await openGatewayTestDb('login_token');
});
afterAll(() => db.close());

const keyA = generateKeyText();
const keyB = generateKeyText();
const box = new SecretBox(parseKeyRing(`a:${keyA}`));
const storedSecret = async (): Promise<string> => {
  const { rows } = await db.pool.query<{ value: string }>("SELECT value FROM settings WHERE key = 'token_secret'");
  return rows[0]?.value ?? '';
};

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
      box,
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
      box,
    });
    const other = await LoginTokens.create({
      secret: 'secret-two-secret-two-secret-two',
      ttlSeconds: 3600,
      pool: db.pool,
      box,
    });
    const expired = await LoginTokens.create({
      secret: 'secret-one-secret-one-secret-one',
      ttlSeconds: -10,
      pool: db.pool,
      box,
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
    const tokens = await LoginTokens.create({ secret, ttlSeconds: 3600, pool: db.pool, box });
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
    const first = await LoginTokens.create({ secret: undefined, ttlSeconds: 60, pool: db.pool, box });
    const second = await LoginTokens.create({ secret: undefined, ttlSeconds: 60, pool: db.pool, box });
    const { rows } = await db.pool.query<{ value: string }>("SELECT value FROM settings WHERE key = 'token_secret'");
    expect(rows).toHaveLength(1);
    expect(rows[0]?.value.length).toBeGreaterThanOrEqual(64);
    expect(await second.verify((await first.issue(claims)).token)).toEqual(identity);
  });

  it('keeps the generated secret encrypted at rest: the stored value signs nothing the gateway accepts', async () => {
    await db.pool.query("DELETE FROM settings WHERE key = 'token_secret'");
    const tokens = await LoginTokens.create({ secret: undefined, ttlSeconds: 60, pool: db.pool, box });
    const stored = await storedSecret();
    expect(stored).toMatch(/^dsec1\.a\./);
    const forged = await new SignJWT({ username: 'mallory', role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('u1')
      .setIssuer('dagu-mcp')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(stored));
    expect(await tokens.verify(forged)).toBeUndefined();
    const secret = box.decrypt(stored, TOKEN_SECRET_PURPOSE);
    const real = await new SignJWT({ username: 'alice', role: 'developer', ver: 1 })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('u1')
      .setIssuer('dagu-mcp')
      .setAudience('dagu-mcp:login')
      .setJti('j1')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(secret));
    expect(await tokens.verify(real)).toEqual({
      userId: 'u1',
      tokenVersion: 1,
      tokenId: 'j1',
      expiresAt: expect.any(Number),
    });
  });

  it('encrypts a secret stored in plain text before, and rewraps it under a rotated key', async () => {
    await db.pool.query("DELETE FROM settings WHERE key = 'token_secret'");
    await db.pool.query(
      "INSERT INTO settings (key, value) VALUES ('token_secret', 'legacy-plaintext-secret-0123456789')",
    );
    const legacy = await LoginTokens.create({ secret: undefined, ttlSeconds: 60, pool: db.pool, box });
    expect(await storedSecret()).toMatch(/^dsec1\.a\./);
    const token = (await legacy.issue(claims)).token;
    const rotated = new SecretBox(parseKeyRing(`b:${keyB},a:${keyA}`));
    const afterRotation = await LoginTokens.create({ secret: undefined, ttlSeconds: 60, pool: db.pool, box: rotated });
    expect(await storedSecret()).toMatch(/^dsec1\.b\./);
    expect(await afterRotation.verify(token)).toEqual(identity);
    const onlyNew = new SecretBox(parseKeyRing(`b:${keyB}`));
    const later = await LoginTokens.create({ secret: undefined, ttlSeconds: 60, pool: db.pool, box: onlyNew });
    expect(await later.verify(token)).toEqual(identity);
    const stranger = new SecretBox(parseKeyRing(`c:${keyA}`));
    await expect(
      LoginTokens.create({ secret: undefined, ttlSeconds: 60, pool: db.pool, box: stranger }),
    ).rejects.toThrow(/key id b, which DAGU_ENCRYPTION_KEY does not hold/);
  });
});
