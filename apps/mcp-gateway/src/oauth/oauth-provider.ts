import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Response } from 'express';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  InvalidGrantError,
  InvalidScopeError,
  InvalidTargetError,
  InvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { isAgentDelegate, type Principal } from '@dagu-mcp/contracts';
import type { AccessTokens } from './access-tokens';
import type { OAuthAddresses } from './addresses';
import type { AuthorizationCodes } from './codes';
import type { ClientStore } from './client-store';
import type { GrantRepository } from './grant.repository';
import type { LiveUsers } from './live-users';
import type { RefreshTokens } from './refresh-tokens';
import type { Revocations } from './revocations';
import { capScopes, parseScope, scopeString, OAUTH_SCOPES } from './scopes';
import { consentKeyOf, type ResourceDirectory } from './resource-directory';

/** What the authorize step hands to the page layer (sign-in, consent). */
export type AuthorizePage = (
  client: OAuthClientInformationFull,
  params: AuthorizationParams,
  res: Response,
) => Promise<void>;

/** A verified OAuth access token as the gateway uses it. */
export interface VerifiedAccess {
  readonly principal: Principal;
  /** The scopes held now: the token's, capped by the user's current role. */
  readonly scopes: string[];
  /**
   * The scopes the token was issued with, uncapped: what a `delegated` agent reads, whose
   * people act with the binding authors' authority rather than their own.
   */
  readonly grantedScopes: string[];
  /** For an agent's token, the agent's sign-in mode when it was issued (the endpoint refuses it under another). */
  readonly signInMode?: string | undefined;
  readonly clientId: string;
  readonly resource: string;
  readonly grantId: string;
}

/**
 * The authorization server behind the MCP SDK's handlers (docs/decisions.md "Built-in OAuth 2.1 authorization server"): codes in Redis, grants and refresh tokens in
 * PostgreSQL, JWT access tokens. The SDK handlers parse and answer the wire
 * (RFC 6749, 7591, 7009); this class decides.
 */
export class DaguOAuthProvider implements OAuthServerProvider {
  /** Set by the page layer: renders sign-in or consent, or redirects with a code. */
  authorizePage: AuthorizePage | undefined;

  constructor(
    private readonly deps: {
      clients: ClientStore;
      codes: AuthorizationCodes;
      grants: GrantRepository;
      refresh: RefreshTokens;
      access: AccessTokens;
      revocations: Revocations;
      users: LiveUsers;
      addresses: OAuthAddresses;
      resources: ResourceDirectory;
    },
  ) {}

  get clientsStore(): ClientStore {
    return this.deps.clients;
  }

  /** Hands the validated request to the page layer (sign-in, consent). */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    if (params.resource !== undefined && !this.deps.addresses.isResource(params.resource.href)) {
      throw new InvalidTargetError(`resource ${params.resource.href} is not served by this server`);
    }
    if (this.authorizePage === undefined) throw new Error('authorize page not wired');
    await this.authorizePage(client, params, res);
  }

  /**
   * PKCE is checked here, in {@link exchangeAuthorizationCode}, after the code is consumed, not
   * by the SDK's token handler before: a failed verification must use the code up too (RFC 6749
   * §4.1.2 single use: a wrong `code_verifier` left the code open to more guesses).
   */
  readonly skipLocalPkceValidation = true;

  /**
   * The PKCE challenge of a live code (part of the SDK's provider interface; the token handler
   * does not call it while {@link skipLocalPkceValidation} is set); a replayed code revokes
   * what it produced.
   */
  async challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    const found = await this.deps.codes.peek(code);
    if (found.state !== 'live') return this.refuseSpentCode(code);
    if (found.binding.clientId !== client.client_id) throw new InvalidGrantError(OTHER_CLIENT);
    return found.binding.codeChallenge;
  }

  /**
   * Exchanges a code for tokens. The code is consumed first, so that every refusal below it
   * (another client, a `code_verifier` that does not match the challenge, another redirect URI
   * or resource) uses it up.
   *
   * @throws InvalidGrantError for an unknown, expired or used code (a used one revokes the
   *   tokens it produced), another client's code, a wrong verifier or redirect URI
   * @throws InvalidTargetError for another resource than the authorization request's
   */
  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    codeVerifier?: string,
    redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    const binding = await this.deps.codes.consume(code);
    if (binding === undefined) return this.refuseSpentCode(code);
    if (binding.clientId !== client.client_id) throw new InvalidGrantError(OTHER_CLIENT);
    if (codeVerifier === undefined || !verifiesChallenge(codeVerifier, binding.codeChallenge)) {
      throw new InvalidGrantError(
        'The code_verifier does not match the code challenge of the authorization request, and the code is now used up; start a new authorization.',
      );
    }
    if (redirectUri !== undefined && redirectUri !== binding.redirectUri) {
      throw new InvalidGrantError('The redirect_uri differs from the one of the authorization request.');
    }
    if (resource !== undefined && resource.href !== binding.resource) {
      throw new InvalidTargetError('The resource differs from the one of the authorization request.');
    }
    const live = await this.liveScopes(binding.userId, parseScope(binding.scope), binding.resource, client.client_id);
    if (!(await this.deps.grants.isLive(binding.grantId)))
      throw new InvalidGrantError('The authorization behind this code was revoked.');
    const familyId = randomUUID();
    const grant = {
      familyId,
      grantId: binding.grantId,
      clientId: client.client_id,
      userId: binding.userId,
      scope: binding.scope,
      resource: binding.resource,
    };
    const refreshToken = await this.deps.refresh.issue(grant);
    await this.deps.codes.recordFamily(code, familyId);
    await this.deps.grants.touch(binding.grantId);
    return this.tokens(grant, live, refreshToken);
  }

  /**
   * Refuses a code that is not live: a used one revokes the token family it produced (a
   * replay).
   *
   * @throws InvalidGrantError always
   */
  private async refuseSpentCode(code: string): Promise<never> {
    const found = await this.deps.codes.peek(code);
    if (found.state === 'used') {
      if (found.familyId !== undefined) {
        await this.deps.refresh.revokeFamily(found.familyId);
        await this.deps.revocations.revoke([found.familyId]);
      }
      throw new InvalidGrantError('The authorization code was already used; the tokens issued from it are revoked.');
    }
    throw new InvalidGrantError('The authorization code is unknown or expired.');
  }

  /** Rotates a refresh token; reuse outside the grace revokes the family. */
  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
    scopes?: string[],
    resource?: URL,
  ): Promise<OAuthTokens> {
    const outcome = await this.deps.refresh.rotate(refreshToken, client.client_id);
    if (!outcome.ok) {
      if (outcome.revokedFamily !== undefined) await this.deps.revocations.revoke([outcome.revokedFamily]);
      throw new InvalidGrantError(outcome.reason);
    }
    const { grant } = outcome;
    if (resource !== undefined && resource.href !== grant.resource) {
      throw new InvalidTargetError('resource differs from the one the refresh token was issued for');
    }
    let held = parseScope(grant.scope);
    if (scopes !== undefined && scopes.length > 0) {
      const extra = scopes.filter((s) => !(held as string[]).includes(s));
      if (extra.length > 0) throw new InvalidScopeError(`scope beyond the authorization: ${extra.join(' ')}`);
      held = held.filter((s) => scopes.includes(s));
    }
    return this.tokens(
      grant,
      await this.liveScopes(grant.userId, held, grant.resource, client.client_id),
      outcome.token,
    );
  }

  /** The SDK's verifier hook: any of our access tokens, audience unchecked (callers check it). */
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const verified = await this.verifyAccess(token, undefined);
    if (verified === undefined) throw new InvalidTokenError('invalid or revoked access token');
    return {
      token,
      clientId: verified.clientId,
      scopes: verified.scopes,
      resource: new URL(verified.resource),
      extra: { principal: verified.principal },
    };
  }

  /**
   * Verifies an access token for `resource` (undefined: any of ours): signature,
   * expiry, audience, revocation of its grant, family or id (bounded by
   * `Revocations`), and the user as they are now (deleted: refused; role caps the scopes).
   */
  async verifyAccess(token: string, resource: string | undefined): Promise<VerifiedAccess | undefined> {
    const claims = await this.deps.access.verify(token, resource);
    if (claims === undefined) return undefined;
    if (await this.deps.revocations.anyRevoked([claims.grantId, claims.familyId, claims.jti])) return undefined;
    const user = await this.deps.users.get(claims.sub);
    if (user === undefined) return undefined;
    return {
      principal: { id: `user:${user.id}`, subject: user.username, role: user.role, credentialType: 'oauth' },
      scopes: capScopes(parseScope(claims.scope), user.role),
      grantedScopes: parseScope(claims.scope),
      signInMode: claims.signInMode,
      clientId: claims.clientId,
      resource: claims.aud,
      grantId: claims.grantId,
    };
  }

  /** RFC 7009: a refresh token revokes its family; an access token is revoked by id. Unknown tokens: nothing. */
  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    const family = await this.deps.refresh.revokeFamilyOf(request.token, client.client_id);
    if (family !== undefined) {
      await this.deps.revocations.revoke([family]);
      return;
    }
    const claims = await this.deps.access.verify(request.token, undefined);
    if (claims !== undefined && claims.clientId === client.client_id) await this.deps.revocations.revoke([claims.jti]);
  }

  /** Revokes a user's (or everyone's) authorization of a client: grants, refresh tokens, live access tokens. */
  async revokeAuthorization(clientId: string, userId: string | undefined): Promise<number> {
    const ids = await this.deps.grants.revoke(clientId, userId);
    await this.deps.revocations.revoke(ids);
    return ids.length;
  }

  /**
   * The scopes a new access token carries: those asked, capped by the user's role now; for a
   * `delegated` agent that names the user, not capped by their role (its people act with the
   * binding authors' authority; the endpoint checks the list on every call).
   */
  private async liveScopes(
    userId: string,
    scopes: readonly string[],
    resource: string,
    clientId: string,
  ): Promise<{ scopes: string[]; signInMode?: string }> {
    const user = await this.deps.users.get(userId);
    if (user === undefined) throw new InvalidGrantError('the user no longer exists');
    const described = await this.deps.resources.describe(resource);
    if (described === undefined) throw new InvalidTargetError(`resource ${resource} is not served for OAuth now`);
    if (described.kind === 'agent') {
      // The consent was given under the agent's policy of that time: a switched policy needs a new one.
      const grant = await this.deps.grants.find(userId, clientId);
      if (grant === undefined || !grant.resources.includes(consentKeyOf(resource, described)))
        throw new InvalidGrantError("The agent's sign-in policy changed since you authorized it; authorize again.");
    }
    const delegate = described.kind === 'agent' && isAgentDelegate(described.agent.signIn, user);
    const capped = delegate ? parseScope(scopeString(scopes)) : capScopes(parseScope(scopeString(scopes)), user.role);
    if (capped.length === 0) throw new InvalidScopeError(`the user's role allows none of: ${scopes.join(' ')}`);
    return described.kind === 'agent'
      ? { scopes: capped, signInMode: described.agent.signIn.mode }
      : { scopes: capped };
  }

  private async tokens(
    grant: { familyId: string; grantId: string; clientId: string; userId: string; resource: string },
    live: { scopes: string[]; signInMode?: string },
    refreshToken: string,
  ): Promise<OAuthTokens> {
    const { scopes } = live;
    const { token, expiresIn } = await this.deps.access.sign({
      ...(live.signInMode !== undefined ? { signInMode: live.signInMode } : {}),
      sub: grant.userId,
      aud: grant.resource,
      clientId: grant.clientId,
      scope: scopeString(scopes),
      grantId: grant.grantId,
      familyId: grant.familyId,
    });
    return {
      access_token: token,
      token_type: 'Bearer',
      expires_in: expiresIn,
      scope: scopeString(scopes),
      refresh_token: refreshToken,
    };
  }
}

/** All scopes, as the 401 challenge and the metadata advertise them. */
export const ALL_SCOPES = scopeString(OAUTH_SCOPES);

const OTHER_CLIENT = 'The authorization code was issued to another client.';

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** RFC 7636 §4.6 (S256, the only method served): BASE64URL(SHA256(verifier)) equals the challenge. */
function verifiesChallenge(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
