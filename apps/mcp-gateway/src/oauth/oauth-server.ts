import type { Redis } from 'ioredis';
import { OutboundAllowList, type Pool, type SecretBox } from '@dagu-mcp/runtime';
import type { UserRepository } from '../auth/user.repository';
import { AccessTokens, isAccessToken } from './access-tokens';
import { OAuthAddresses } from './addresses';
import { ClientStore } from './client-store';
import { AuthorizationCodes } from './codes';
import { GrantRepository } from './grant.repository';
import { LiveUsers } from './live-users';
import { MetadataDocuments } from './metadata-documents';
import { DaguOAuthProvider } from './oauth-provider';
import { RefreshTokens } from './refresh-tokens';
import { ResourceDirectory } from './resource-directory';
import { Revocations } from './revocations';
import { SigningKeys } from './signing-keys';

/** Settings of the authorization server (the `OAUTH_*` variables). */
export interface OAuthSettings {
  readonly publicUrl: string;
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  readonly refreshGraceSeconds: number;
  readonly revocationCheckMs: number;
  readonly signingKeyRotationDays: number;
  readonly metadataDocumentHosts: readonly string[];
  readonly metadataDocumentAllowPrivate: boolean;
  /** Redis key prefix (the bus prefix). */
  readonly prefix: string;
  /** How long a replica trusts what it read about a user, ms (`LOGIN_STATE_CACHE_MS`). */
  readonly userCacheMs: number;
}

/** The authorization server's parts, wired. */
export interface OAuthServer {
  readonly addresses: OAuthAddresses;
  readonly provider: DaguOAuthProvider;
  readonly grants: GrantRepository;
  readonly codes: AuthorizationCodes;
  readonly keys: SigningKeys;
  readonly users: LiveUsers;
  /** Which resources OAuth serves now: `/mcp` and the agents that take OAuth sign-in. */
  readonly resources: ResourceDirectory;
  /** What `Authenticator` calls for Bearer tokens (auth/authenticator.ts `OAuthAccessVerifier`). */
  readonly verifier: {
    isAccessToken(token: string): boolean;
    verifyAccess: DaguOAuthProvider['verifyAccess'];
  };
}

const CODE_TTL_MS = 5 * 60_000;

/** The path (below `BASE_PATH`) of a published agent's MCP endpoint: two slug segments after `/mcp/v1/`. */
const AGENT_ENDPOINT_PATH = /^\/mcp\/v1\/[a-z0-9][a-z0-9_-]{0,63}\/[a-z0-9][a-z0-9-]{0,39}$/;

/**
 * Builds the built-in OAuth 2.1 authorization server on the gateway's
 * PostgreSQL schema (clients, grants, refresh tokens, signing keys) and Redis
 * (codes, revocations), with the signing keys and client secrets encrypted by `box`.
 */
export function createOAuthServer(deps: {
  pool: Pool;
  redis: Redis;
  box: SecretBox;
  users: UserRepository;
  settings: OAuthSettings;
}): OAuthServer {
  const { settings } = deps;
  // `/mcp` and every published agent's endpoint `/mcp/v1/{workspace}/{agent}` are resources.
  const addresses = new OAuthAddresses(settings.publicUrl, ['/mcp', AGENT_ENDPOINT_PATH]);
  const accessTtlMs = settings.accessTokenTtlSeconds * 1000;
  const keys = new SigningKeys({
    pool: deps.pool,
    box: deps.box,
    rotationMs: settings.signingKeyRotationDays * 24 * 3600_000,
    keepMs: 2 * accessTtlMs,
  });
  const documents = new MetadataDocuments({
    allow: new OutboundAllowList(settings.metadataDocumentHosts),
    allowNonPublic: settings.metadataDocumentAllowPrivate,
    timeoutMs: 5000,
    maxBytes: 64 * 1024,
    defaultCacheMs: 5 * 60_000,
    maxCacheMs: 24 * 3600_000,
  });
  const grants = new GrantRepository(deps.pool);
  const codes = new AuthorizationCodes({ redis: deps.redis, prefix: settings.prefix, ttlMs: CODE_TTL_MS });
  const users = new LiveUsers({ repository: deps.users, cacheMs: settings.userCacheMs });
  const resources = new ResourceDirectory(addresses);
  const provider = new DaguOAuthProvider({
    clients: new ClientStore({ pool: deps.pool, box: deps.box, documents }),
    codes,
    grants,
    refresh: new RefreshTokens({
      pool: deps.pool,
      ttlMs: settings.refreshTokenTtlSeconds * 1000,
      graceMs: settings.refreshGraceSeconds * 1000,
    }),
    access: new AccessTokens({ keys, issuer: addresses.issuer, ttlSeconds: settings.accessTokenTtlSeconds }),
    revocations: new Revocations({
      redis: deps.redis,
      prefix: settings.prefix,
      keepMs: accessTtlMs + 60_000,
      checkMs: settings.revocationCheckMs,
    }),
    users,
    addresses,
    resources,
  });
  return {
    addresses,
    provider,
    grants,
    codes,
    keys,
    users,
    resources,
    verifier: { isAccessToken, verifyAccess: (token, resource) => provider.verifyAccess(token, resource) },
  };
}
