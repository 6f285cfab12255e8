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
