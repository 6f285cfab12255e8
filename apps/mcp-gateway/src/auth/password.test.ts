import { hashPassword, verifyPassword, verifyUserPassword } from './password';

/** Password hashing (argon2id, PHC strings) and the user check that does not leak unknown usernames. */
describe('passwords', () => {
  let hash: string;
  beforeAll(async () => {
    hash = await hashPassword('correct horse battery staple');
  });

  it('hashes to an argon2id PHC string, salted (two hashes of one password differ)', async () => {
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(hash).not.toContain('correct horse');
    expect(await hashPassword('correct horse battery staple')).not.toBe(hash);
  });

  it.each([
    ['the right password', 'correct horse battery staple', true],
    ['a wrong password', 'correct horse battery stapler', false],
    ['an empty password', '', false],
    ['a case change', 'Correct horse battery staple', false],
  ])('verifies %s', async (_label, password, expected) => {
    expect(await verifyPassword(hash, password)).toBe(expected);
  });

  it.each(['', 'not-a-hash', '$argon2id$v=19$m=19456,t=2,p=1$broken', '$2b$10$abcdefghijklmnopqrstuv'])(
    'a malformed hash %p is a mismatch, never a throw',
    async (malformed) => {
      await expect(verifyPassword(malformed, 'anything')).resolves.toBe(false);
    },
  );

  it('verifyUserPassword: checks a known user, and for an unknown one (no hash) still hashes once and says no', async () => {
    expect(await verifyUserPassword(hash, 'correct horse battery staple')).toBe(true);
    expect(await verifyUserPassword(hash, 'wrong')).toBe(false);
    const started = performance.now();
    expect(await verifyUserPassword(undefined, 'correct horse battery staple')).toBe(false);
    // The throwaway verification runs even without a user (no username enumeration by timing).
    expect(performance.now() - started).toBeGreaterThan(1);
  });
});
