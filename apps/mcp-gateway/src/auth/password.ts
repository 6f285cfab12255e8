import { hash, verify } from '@node-rs/argon2';

/**
 * Password hashing with argon2id (the `@node-rs/argon2` defaults: 19 MiB,
 * 2 passes — the OWASP baseline). Hashes are PHC strings.
 */
export async function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/** True when `password` matches `passwordHash`; a malformed hash is a mismatch, never a throw. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Like `verifyPassword`, but for a user that may not exist: with no hash it
 * still runs one argon2 verification against a throwaway hash, so the
 * answer takes as long for an unknown username as for a wrong password
 * (no username enumeration by timing). Always false without a hash.
 */
export async function verifyUserPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  if (passwordHash !== undefined) return verifyPassword(passwordHash, password);
  dummyHash ??= hashPassword('not-a-real-password');
  await verifyPassword(await dummyHash, password);
  return false;
}
