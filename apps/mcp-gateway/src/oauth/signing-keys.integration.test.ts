import { randomBytes } from 'node:crypto';
import { SecretBox } from '@dagu-mcp/runtime';
import { openGatewayTestDb, type GatewayTestDb } from '../auth/auth-db.test-support';
import { SigningKeys } from './signing-keys';

/**
 * Signing-key rotation against the real PostgreSQL: a key older than the
 * rotation age is replaced, the old one stays published (JWKS, verification) for `keepMs`
 * after its successor was made, then it is gone; the private key is stored encrypted.
 */
let db: GatewayTestDb;
const DAY = 24 * 3600_000;
const box = new SecretBox([{ id: 'k1', key: randomBytes(32) }]);

beforeAll(async () => {
  db = await openGatewayTestDb('signing_keys_it');
});
afterAll(async () => {
  await db?.close();
});

test('rotates after the rotation age and keeps the old key published for keepMs, then drops it', async () => {
  const keys = new SigningKeys({ pool: db.pool, box, rotationMs: 30 * DAY, keepMs: 2 * 3600_000, reloadMs: 0 });
  const first = await keys.current(Date.now());
  expect((await keys.current(Date.now())).kid).toBe(first.kid);

  // The key grows old: its row says it was made 31 days ago (time only moves forward in a replica).
  await db.pool.query("UPDATE oauth_signing_keys SET created_at = now() - interval '31 days' WHERE kid = $1", [
    first.kid,
  ]);
  // A replica that reads the keys now (one already running keeps each key's creation time as it loaded it).
  const replica = new SigningKeys({ pool: db.pool, box, rotationMs: 30 * DAY, keepMs: 2 * 3600_000, reloadMs: 0 });
  const now = Date.now();
  const second = await replica.current(now);
  expect(second.kid).not.toBe(first.kid);
  expect((await replica.jwks(now)).keys.map((k) => k.kid).sort()).toEqual([first.kid, second.kid].sort());
  expect(await replica.publicKey(first.kid, now)).toBeDefined();

  const later = now + 2 * 3600_000 + 60_000;
  expect((await replica.jwks(later)).keys.map((k) => k.kid)).toEqual([second.kid]);
  expect(await replica.publicKey(first.kid, later)).toBeUndefined();
  // The first instance signs with the new key too once it reloads.
  expect((await keys.current(later)).kid).toBe(second.kid);

  const { rows } = await db.pool.query<{ private_enc: string; public_jwk: Record<string, unknown> }>(
    'SELECT private_enc, public_jwk FROM oauth_signing_keys',
  );
  expect(rows).toHaveLength(2);
  for (const row of rows) {
    expect(row.public_jwk).not.toHaveProperty('d');
    expect(row.private_enc).not.toContain('"d"');
  }
});
