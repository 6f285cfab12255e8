import type { Redis } from 'ioredis';
import { z } from 'zod';
import { hashToken, newOpaqueToken } from './refresh-tokens';

/** What an authorization code is bound to. */
export interface CodeBinding {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly scope: string;
  readonly resource: string;
  readonly userId: string;
  readonly grantId: string;
}

const CodeBindingSchema = z.object({
  clientId: z.string(),
  redirectUri: z.string(),
  codeChallenge: z.string(),
  scope: z.string(),
  resource: z.string(),
  userId: z.string(),
  grantId: z.string(),
});

/** The state of a presented code. */
export type CodeLookup =
  | { readonly state: 'live'; readonly binding: CodeBinding }
  /** Already exchanged: `familyId` is what the first exchange issued (to be revoked). */
  | { readonly state: 'used'; readonly familyId: string | undefined }
  | { readonly state: 'unknown' };

/**
 * Authorization codes in Redis: single-use, bound to
 * client, redirect URI, PKCE challenge, scope, resource and user, kept `ttlMs`
 * (5 minutes). Keys are SHA-256 hashes of the code; the code itself is never
 * stored. An exchanged code leaves a "used" marker naming the token family it
 * produced, so that a replay can revoke that family.
 */
export class AuthorizationCodes {
  constructor(private readonly deps: { redis: Redis; prefix: string; ttlMs: number }) {}

  private key(code: string): string {
    return `${this.deps.prefix}:oauth:code:${hashToken(code)}`;
  }

  private usedKey(code: string): string {
    return `${this.deps.prefix}:oauth:code-used:${hashToken(code)}`;
  }

  /** Stores a new code for `binding` and returns it. */
  async issue(binding: CodeBinding): Promise<string> {
    const code = newOpaqueToken('dac_');
    await this.deps.redis.set(this.key(code), JSON.stringify(binding), 'PX', this.deps.ttlMs);
    return code;
  }

  /** Reads a code without consuming it. */
  async peek(code: string): Promise<CodeLookup> {
    const [live, used] = await this.deps.redis.mget(this.key(code), this.usedKey(code));
    if (live !== null && live !== undefined)
      return { state: 'live', binding: CodeBindingSchema.parse(JSON.parse(live)) };
    if (used !== null && used !== undefined) return { state: 'used', familyId: used === '' ? undefined : used };
    return { state: 'unknown' };
  }

  /**
   * Consumes a code atomically (GETDEL): exactly one caller gets the binding;
   * a "used" marker is left for replay detection (kept twice the code's TTL).
   */
  async consume(code: string): Promise<CodeBinding | undefined> {
    const raw = await this.deps.redis.getdel(this.key(code));
    if (raw === null) return undefined;
    await this.deps.redis.set(this.usedKey(code), '', 'PX', this.deps.ttlMs * 2);
    return CodeBindingSchema.parse(JSON.parse(raw));
  }

  /** Names the token family a consumed code produced (for a later replay to revoke). */
  async recordFamily(code: string, familyId: string): Promise<void> {
    await this.deps.redis.set(this.usedKey(code), familyId, 'PX', this.deps.ttlMs * 2);
  }
}
