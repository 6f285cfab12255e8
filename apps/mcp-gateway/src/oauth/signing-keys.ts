import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK, type KeyLike } from 'jose';
import { z } from 'zod';
import type { Pool, SecretBox } from '@dagu-mcp/runtime';

const PrivateJwkSchema = z.object({ kty: z.string(), crv: z.string(), x: z.string(), y: z.string(), d: z.string() });

/** The signature algorithm of access tokens: ECDSA P-256 (asymmetric, small keys and tokens). */
export const ACCESS_TOKEN_ALG = 'ES256';
const PURPOSE = 'oauth-signing-key';

interface LoadedKey {
  readonly kid: string;
  readonly publicJwk: JWK;
  readonly createdAt: number;
  privateKey?: KeyLike | Uint8Array;
  publicKey?: KeyLike | Uint8Array;
}

/**
 * The authorization server's JWT signing keys: ES256 key
 * pairs in `oauth_signing_keys`, the private half encrypted with the secret
 * box. The newest key signs; a key older than `rotationMs` is replaced on the
 * next signing (any replica may do it; two replicas racing both add a key and
 * the newest wins, harmlessly). A retired key stays in the JWKS and keeps
 * verifying for `keepMs` (at least the access-token lifetime) after its
 * successor appeared.
 */
export class SigningKeys {
  private keys: LoadedKey[] = [];
  private loadedAt = 0;

  constructor(
    private readonly deps: { pool: Pool; box: SecretBox; rotationMs: number; keepMs: number; reloadMs?: number },
  ) {}

  /** The key that signs now, created or rotated when due. */
  async current(now = Date.now()): Promise<{ kid: string; key: KeyLike | Uint8Array }> {
    await this.refresh(now);
    let newest = this.keys[0];
    if (newest === undefined || now - newest.createdAt > this.deps.rotationMs) {
      await this.create();
      await this.refresh(now, true);
      newest = this.keys[0];
    }
    if (newest === undefined) throw new Error('no signing key');
    newest.privateKey ??= await this.privateKeyOf(newest.kid);
    return { kid: newest.kid, key: newest.privateKey };
  }

  /** The public key of `kid` if it is still published, else undefined. */
  async publicKey(kid: string, now = Date.now()): Promise<KeyLike | Uint8Array | undefined> {
    let found = this.keys.find((k) => k.kid === kid);
    if (found === undefined) {
      await this.refresh(now, true);
      found = this.keys.find((k) => k.kid === kid);
    }
    if (found === undefined) return undefined;
    found.publicKey ??= await importJWK(found.publicJwk, ACCESS_TOKEN_ALG);
    return found.publicKey;
  }

  /** The JWKS document (RFC 7517): every published public key. */
  async jwks(now = Date.now()): Promise<{ keys: JWK[] }> {
    await this.refresh(now);
    if (this.keys.length === 0) await this.current(now);
    return { keys: this.keys.map((k) => ({ ...k.publicJwk, kid: k.kid, alg: ACCESS_TOKEN_ALG, use: 'sig' })) };
  }

  private async refresh(now: number, force = false): Promise<void> {
    if (!force && now - this.loadedAt < (this.deps.reloadMs ?? 60_000)) return;
    // A key is published until `keepMs` after the next newer key was created.
    const { rows } = await this.deps.pool.query<{ kid: string; public_jwk: JWK; created_ms: string }>(
      `SELECT kid, public_jwk, (extract(epoch FROM created_at) * 1000)::bigint AS created_ms
         FROM oauth_signing_keys ORDER BY created_at DESC, kid DESC`,
    );
    const kept: LoadedKey[] = [];
    let successorAt: number | undefined;
    for (const row of rows) {
      const createdAt = Number(row.created_ms);
      if (successorAt === undefined || now - successorAt < this.deps.keepMs) {
        const old = this.keys.find((k) => k.kid === row.kid);
        kept.push(old ?? { kid: row.kid, publicJwk: row.public_jwk, createdAt });
      }
      successorAt = createdAt;
    }
    this.keys = kept;
    this.loadedAt = now;
  }

  private async create(): Promise<void> {
    const { publicKey, privateKey } = await generateKeyPair(ACCESS_TOKEN_ALG, { extractable: true });
    const kid = randomUUID();
    const privateJwk = JSON.stringify(await exportJWK(privateKey));
    await this.deps.pool.query(
      'INSERT INTO oauth_signing_keys (kid, alg, public_jwk, private_enc) VALUES ($1, $2, $3, $4)',
      [kid, ACCESS_TOKEN_ALG, JSON.stringify(await exportJWK(publicKey)), this.deps.box.encrypt(privateJwk, PURPOSE)],
    );
  }

  private async privateKeyOf(kid: string): Promise<KeyLike | Uint8Array> {
    const { rows } = await this.deps.pool.query<{ private_enc: string }>(
      'SELECT private_enc FROM oauth_signing_keys WHERE kid = $1',
      [kid],
    );
    const enc = rows[0]?.private_enc;
    if (enc === undefined) throw new Error(`signing key ${kid} is gone`);
    const jwk = PrivateJwkSchema.parse(JSON.parse(this.deps.box.decrypt(enc, PURPOSE)));
    return importJWK(jwk, ACCESS_TOKEN_ALG);
  }
}
