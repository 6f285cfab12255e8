import { ApiKeyRepository, generateApiKey, hashApiKey, KEY_PREFIX_LENGTH } from './api-key.repository';
import { openGatewayTestDb, type GatewayTestDb } from './auth-db.test-support';

/** API keys as stored in the gateway's schema (real PostgreSQL, a schema of its own). */
let db: GatewayTestDb;
let keys: ApiKeyRepository;
beforeAll(async () => {
  db = await openGatewayTestDb('api_keys');
  keys = new ApiKeyRepository(db.pool);
});
afterAll(() => db.close());

const input = {
  name: 'ci',
  role: 'operator' as const,
  surfaces: ['mcp' as const],
  expiresAt: null,
  createdBy: 'user:admin',
};

describe('API keys', () => {
  it('generates dagu_ keys of 256 random bits and hashes them with SHA-256', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^dagu_[A-Za-z0-9_-]{43}$/);
    expect(generateApiKey()).not.toBe(key);
    expect(hashApiKey('dagu_x')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey('dagu_x')).toBe(hashApiKey('dagu_x'));
  });

  it('stores a key as its hash and lookup prefix only, and finds it by that prefix', async () => {
    const expiresAt = new Date('2031-01-02T03:04:05.000Z');
    const { record, key } = await keys.create({ ...input, surfaces: ['mcp', 'rest_api'], expiresAt });
    expect(record).toMatchObject({
      name: 'ci',
      role: 'operator',
      surfaces: ['mcp', 'rest_api'],
      expiresAt: '2031-01-02T03:04:05.000Z',
      lastUsedAt: null,
      revoked: false,
      prefix: key.slice(0, KEY_PREFIX_LENGTH),
      keyHash: hashApiKey(key),
    });
    const { rows } = await db.pool.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [record.id]);
    expect(JSON.stringify(rows)).not.toContain(key);
    expect(await keys.findByPrefix(record.prefix)).toEqual(record);
    expect(await keys.findByPrefix('dagu_nothere')).toBeUndefined();
  });

  it('lists live keys newest first; a revoked key leaves the list, is found as revoked, and revokes once', async () => {
    const older = await keys.create({ ...input, name: 'older' });
    const newer = await keys.create({ ...input, name: 'newer' });
    const names = (await keys.list()).map((k) => k.name);
    expect(names.indexOf('newer')).toBeLessThan(names.indexOf('older'));
    expect(await keys.revoke(older.record.id)).toBe(older.record.prefix);
    expect(await keys.revoke(older.record.id)).toBeUndefined();
    expect(await keys.revoke('00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect((await keys.list()).map((k) => k.id)).not.toContain(older.record.id);
    expect(await keys.findByPrefix(older.record.prefix)).toMatchObject({ revoked: true });
    expect(await keys.findByPrefix(newer.record.prefix)).toMatchObject({ revoked: false });
  });

  it('touch records the last use', async () => {
    const { record } = await keys.create(input);
    await keys.touch(record.id);
    const touched = await keys.findByPrefix(record.prefix);
    expect(touched?.lastUsedAt).not.toBeNull();
    expect(Date.now() - Date.parse(touched?.lastUsedAt ?? '')).toBeLessThan(60_000);
  });
});
