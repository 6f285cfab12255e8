import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest, one way (docs/security.md "Step isolation and secrets at
 * rest"): AES-256-GCM (authenticated encryption from `node:crypto`) with a
 * key id in every ciphertext, so keys can rotate.
 *
 * Ciphertext text form: `dsec1.<key id>.<base64url(iv ‖ ciphertext ‖ tag)>`.
 * The `purpose` (e.g. `gateway.settings.token_secret`) is bound as
 * additional authenticated data: a ciphertext copied into another row or
 * field does not decrypt there.
 *
 * A key ring is written `id:base64key[,id:base64key…]` (the first key
 * encrypts; all of them decrypt) or as one bare base64 key, whose id is then
 * the first 8 hex digits of its SHA-256. Keys are 32 bytes.
 */

/** Prefix of every ciphertext this helper writes. */
export const SECRET_PREFIX = 'dsec1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** A key ring entry. */
export interface SecretKey {
  readonly id: string;
  readonly key: Buffer;
}

/** Raised when a key ring is malformed or a ciphertext cannot be opened; its message never contains key material or plaintext. */
export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

/** The id a bare key gets: the first 8 hex digits of its SHA-256. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

function decodeKey(text: string, label: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== KEY_BYTES) {
    throw new SecretBoxError(`${label}: a key must be ${KEY_BYTES} bytes in base64 (e.g. \`openssl rand -base64 32\`)`);
  }
  return key;
}

/**
 * Parses a key ring (`id:base64,…` or one bare base64 key).
 *
 * @throws SecretBoxError on an empty ring, a key of the wrong length, a bad or repeated id
 */
export function parseKeyRing(text: string): SecretKey[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new SecretBoxError('the key ring is empty');
  const keys: SecretKey[] = [];
  for (const [index, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const label = `key ${index + 1}`;
    const key = decodeKey(colon < 0 ? entry : entry.slice(colon + 1), label);
    const id = colon < 0 ? keyIdOf(key) : entry.slice(0, colon);
    if (!KEY_ID.test(id)) throw new SecretBoxError(`${label}: the id must be 1–32 of A-Z a-z 0-9 _ -`);
    if (keys.some((k) => k.id === id)) throw new SecretBoxError(`${label}: id ${id} is used twice`);
    keys.push({ id, key });
  }
  return keys;
}

/** Encrypts and decrypts secrets at rest with a key ring whose first key is the current one. */
export class SecretBox {
  private readonly keys: ReadonlyMap<string, Buffer>;
  /** Id of the key new ciphertexts are written with. */
  readonly currentKeyId: string;

  constructor(ring: readonly SecretKey[]) {
    const [current] = ring;
    if (current === undefined) throw new SecretBoxError('the key ring is empty');
    this.currentKeyId = current.id;
    this.keys = new Map(ring.map((k) => [k.id, k.key]));
  }

  /** Whether `text` has the form of a ciphertext of this helper (not whether it opens). */
  static isCiphertext(text: string): boolean {
    return text.startsWith(`${SECRET_PREFIX}.`);
  }

  /** The key id a ciphertext names; undefined when `text` is not one. */
  static keyIdOf(text: string): string | undefined {
    const parts = text.split('.');
    return parts.length === 3 && parts[0] === SECRET_PREFIX ? parts[1] : undefined;
  }

  /** Encrypts `plaintext` for `purpose` with the current key (a fresh random IV each time). */
  encrypt(plaintext: string, purpose: string): string {
    const key = this.keys.get(this.currentKeyId);
    if (key === undefined) throw new SecretBoxError('the current key is missing');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const blob = Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    return `${SECRET_PREFIX}.${this.currentKeyId}.${blob}`;
  }

  /**
   * Decrypts a ciphertext of {@link encrypt} for the same `purpose`.
   *
   * @throws SecretBoxError when it is not a ciphertext, its key id is not in the ring, or it does not authenticate
   */
  decrypt(ciphertext: string, purpose: string): string {
    const keyId = SecretBox.keyIdOf(ciphertext);
    if (keyId === undefined) throw new SecretBoxError(`${purpose}: not an encrypted secret`);
    const key = this.keys.get(keyId);
    if (key === undefined) {
      throw new SecretBoxError(
        `${purpose}: encrypted with key id ${keyId}, which DAGU_ENCRYPTION_KEY does not hold (add it after the current key to rotate)`,
      );
    }
    const blob = Buffer.from(ciphertext.slice(SECRET_PREFIX.length + keyId.length + 2), 'base64url');
    if (blob.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError(`${purpose}: truncated ciphertext`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(purpose, 'utf8'));
      decipher.setAuthTag(blob.subarray(blob.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(blob.subarray(IV_BYTES, blob.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretBoxError(`${purpose}: the ciphertext does not authenticate (wrong key or altered)`);
    }
  }

  /** Whether a ciphertext should be rewritten with the current key (key rotation). */
  needsRewrap(ciphertext: string): boolean {
    return SecretBox.keyIdOf(ciphertext) !== this.currentKeyId;
  }

  /**
   * The ciphertext re-encrypted with the current key; a plaintext (a value
   * stored before encryption existed) is encrypted. Callers write it back
   * when it differs from what they read.
   */
  rewrap(stored: string, purpose: string): string {
    if (!SecretBox.isCiphertext(stored)) return this.encrypt(stored, purpose);
    if (!this.needsRewrap(stored)) return stored;
    return this.encrypt(this.decrypt(stored, purpose), purpose);
  }
}

/** A fresh random key in base64 (what `openssl rand -base64 32` prints). */
export function generateKeyText(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}
