import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { AccessDeniedError, InvalidTargetError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import type { BrowserSession } from '../auth/browser-sessions';
import type { renderOAuthPage } from '../http/pages/oauth-pages';
import { browserSessionOf } from '../http/principal';
import { clientNameOf } from '../oauth/client-store';
import type { OAuthServer } from '../oauth/oauth-server';
import { cspSourceOf, redirectHost } from '../oauth/redirect-uris';
import type { Grant } from '../oauth/grant.repository';
import { consentKeyOf } from '../oauth/resource-directory';
import { OAUTH_SCOPES, parseScope, requestedScopes, scopeString, type OAuthScope } from '../oauth/scopes';
import { consentOffer, offerView } from './oauth-offer';

/** An authorization request waiting for the person's decision (kept in Redis, bound to their session). */
export interface PendingAuthorization {
  readonly sessionId: string;
  readonly clientId: string;
  readonly clientName: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly state?: string | undefined;
  readonly scopes: OAuthScope[];
  readonly resource: string;
  /** What the consent is remembered under: the resource, and an agent's sign-in mode (`consentKeyOf`). */
  readonly consentKey?: string | undefined;
}

/** Renders an OAuth page (http/pages/oauth-pages.ts). */
export type RenderPage = typeof renderOAuthPage;

const PENDING_TTL_SECONDS = 600;

/** The browser session of the request, if the OAuth router's session reader found one. */
export function pageSessionOf(res: Response): BrowserSession | undefined {
  return browserSessionOf(res);
}

const PendingSchema = z.object({
  sessionId: z.string(),
  clientId: z.string(),
  clientName: z.string(),
  redirectUri: z.string(),
  codeChallenge: z.string(),
  state: z.string().optional(),
  scopes: z.array(z.enum(OAUTH_SCOPES)),
  resource: z.string(),
  consentKey: z.string().optional(),
});

/**
 * The authorize step after the SDK handler validated client and redirect URI
 *: no session → the shared sign-in page,
 * back here after; a resource OAuth does not serve now → `invalid_target`; a
 * `delegated` agent that does not name the person → a page saying why; a
 * remembered consent covering the request (same resource, no scope beyond the
 * granted ones) → a code at once; otherwise the consent page, which names the
 * resource and the authority the client will have and offers each scope as a
 * checkbox, and whose form carries only an id of the pending request (kept in
 * Redis for 10 minutes, bound to the session), the CSRF token and the ticks.
 */
export class ConsentFlow {
  constructor(
    private readonly deps: {
      server: OAuthServer;
      redis: Redis;
      prefix: string;
      basePath: string;
      render: RenderPage;
    },
  ) {}

  private pendingKey(id: string): string {
    return `${this.deps.prefix}:oauth:pending:${id}`;
  }

  /** The provider's `authorizePage` hook. */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const session = pageSessionOf(res);
    if (session === undefined) {
      res.redirect(303, `${this.deps.basePath}/signin?next=${encodeURIComponent(this.authorizePath(client, params))}`);
      return;
    }
    const resource = params.resource?.href ?? this.deps.server.addresses.mcpResource;
    const grant = await this.deps.server.grants.find(session.userId, client.client_id);
    // A step-up asks only for the missing scope (mcp-revisions §3): offer it beside what the person
    // already granted this client for this resource, so the new token does not lose those. A
    // request within the grant gets what it asked, no more.
    const described = await this.deps.server.resources.describe(resource);
    const consentKey = described === undefined ? resource : consentKeyOf(resource, described);
    const held = grant !== undefined && grant.resources.includes(consentKey) ? parseScope(grant.scope) : [];
    const asked = requestedScopes(params.scopes);
    const stepUp = asked.some((s) => !held.includes(s));
    const wanted = stepUp ? OAUTH_SCOPES.filter((s) => asked.includes(s) || held.includes(s)) : asked;
    const offer = await consentOffer(this.deps.server, resource, wanted, {
      username: session.username,
      role: session.principal.role,
    });
    if (offer === undefined) {
      throw new InvalidTargetError(`resource ${resource} is not served for OAuth sign-in (no agent there takes it)`);
    }
    if ('refused' in offer) {
      res.setHeader('Cache-Control', 'no-store');
      this.deps.render(
        res,
        'oauth-error',
        { title: 'Not allowed', message: offer.refused, basePath: this.deps.basePath },
        { status: 403 },
      );
      return;
    }
    if (offer.scopes.length === 0) {
      throw new AccessDeniedError(`the role ${session.principal.role} allows none of the requested scopes`);
    }
    const pending: PendingAuthorization = {
      sessionId: session.sessionId,
      clientId: client.client_id,
      clientName: clientNameOf(client),
      redirectUri: params.redirectUri,
      codeChallenge: params.codeChallenge,
      state: params.state,
      scopes: offer.scopes,
      resource,
      consentKey,
    };
    if (grant !== undefined && remembers(grant, consentKey, offer.scopes)) {
      // Remembered consent: this resource, and no scope beyond what the person granted.
      res.redirect(302, await this.codeRedirect(pending, session.userId, grant.id));
      return;
    }
    const id = randomBytes(18).toString('base64url');
    await this.deps.redis.set(this.pendingKey(id), JSON.stringify(pending), 'EX', PENDING_TTL_SECONDS);
    res.setHeader('Cache-Control', 'no-store');
    this.deps.render(
      res,
      'consent',
      {
        title: 'Authorize access',
        basePath: this.deps.basePath,
        clientName: pending.clientName,
        clientId: client.client_id,
        verifiedDomain: client.client_id.startsWith('https://') ? new URL(client.client_id).host : undefined,
        redirectHost: redirectHost(params.redirectUri),
        username: session.username,
        role: session.principal.role,
        ...offerView(offer),
        pendingId: id,
        csrfToken: session.csrfToken,
        action: `${this.deps.basePath}/oauth/consent`,
      },
      { formTarget: formTargetOf(params.redirectUri) },
    );
  }

  /**
   * The consent form's POST: checks session and CSRF token, takes the pending
   * request (single use), and redirects to the client with `code`, `state` and
   * `iss` (Allow) or `error=access_denied` (Deny).
   */
  async decide(req: Request, res: Response): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    const session = pageSessionOf(res);
    const form = formOf(req.body);
    if (session === undefined) {
      this.deps.render(
        res,
        'oauth-error',
        {
          title: 'Signed out',
          message: 'Your session ended. Start again from your application.',
          basePath: this.deps.basePath,
        },
        { status: 401 },
      );
      return;
    }
    if (typeof form.csrf !== 'string' || form.csrf !== session.csrfToken) {
      this.deps.render(
        res,
        'oauth-error',
        {
          title: 'Request refused',
          message: 'The form was not sent from this page (CSRF check failed). Start again from your application.',
          basePath: this.deps.basePath,
        },
        { status: 403 },
      );
      return;
    }
    const id = typeof form.request === 'string' ? form.request : '';
    const raw = id === '' ? null : await this.deps.redis.getdel(this.pendingKey(id));
    const pending = raw === null ? undefined : PendingSchema.parse(JSON.parse(raw));
    if (pending === undefined || pending.sessionId !== session.sessionId) {
      this.deps.render(
        res,
        'oauth-error',
        {
          title: 'Request expired',
          message: 'This authorization request expired or was already answered. Start again from your application.',
          basePath: this.deps.basePath,
        },
        { status: 400 },
      );
      return;
    }
    // The person may untick scopes: the token carries only what stays ticked.
    const granted = pending.scopes.filter((s) => ticked(form.scope).includes(s));
    if (form.decision === 'allow' && granted.length > 0) {
      res.redirect(303, await this.allow({ ...pending, scopes: granted }, session.userId));
      return;
    }
    res.redirect(303, this.denyUrl(pending));
  }

  /** The redirect of a refusal: `error=access_denied`, `state`, `iss`. */
  denyUrl(pending: Pick<PendingAuthorization, 'redirectUri' | 'state'>): string {
    const url = new URL(pending.redirectUri);
    url.searchParams.set('error', 'access_denied');
    url.searchParams.set('error_description', 'The user denied the request.');
    if (pending.state !== undefined) url.searchParams.set('state', pending.state);
    url.searchParams.set('iss', this.deps.server.addresses.issuer);
    return url.href;
  }

  /**
   * Records the consent (the grant becomes exactly `pending.scopes` for `pending.resource`; other
   * resources it covered stay covered only while the scopes are the same) and returns the
   * redirect with a fresh code.
   */
  async allow(pending: PendingAuthorization, userId: string): Promise<string> {
    const existing = await this.deps.server.grants.find(userId, pending.clientId);
    const scope = scopeString(pending.scopes);
    const kept = existing !== undefined && sameScopes(existing.scope, scope) ? existing.resources : [];
    const grantId = await this.deps.server.grants.upsert({
      userId,
      clientId: pending.clientId,
      clientName: pending.clientName,
      scope,
      resources: [...new Set([...kept, pending.consentKey ?? pending.resource])],
    });
    return this.codeRedirect(pending, userId, grantId);
  }

  /** The redirect to the client with a fresh code under grant `grantId` (RFC 9207: with `iss`). */
  private async codeRedirect(pending: PendingAuthorization, userId: string, grantId: string): Promise<string> {
    const code = await this.deps.server.codes.issue({
      clientId: pending.clientId,
      redirectUri: pending.redirectUri,
      codeChallenge: pending.codeChallenge,
      scope: scopeString(pending.scopes),
      resource: pending.resource,
      userId,
      grantId,
    });
    const url = new URL(pending.redirectUri);
    url.searchParams.set('code', code);
    if (pending.state !== undefined) url.searchParams.set('state', pending.state);
    url.searchParams.set('iss', this.deps.server.addresses.issuer);
    return url.href;
  }

  private authorizePath(client: OAuthClientInformationFull, params: AuthorizationParams): string {
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: params.redirectUri,
      code_challenge: params.codeChallenge,
      code_challenge_method: 'S256',
    });
    if (params.state !== undefined) q.set('state', params.state);
    if (params.scopes !== undefined && params.scopes.length > 0) q.set('scope', params.scopes.join(' '));
    if (params.resource !== undefined) q.set('resource', params.resource.href);
    return `${this.deps.basePath}/oauth/authorize?${q.toString()}`;
  }
}

/**
 * Whether a remembered consent covers a request: the same resource (for an agent, under the same
 * sign-in mode), and every scope asked was granted.
 */
function remembers(grant: Grant, consentKey: string, scopes: readonly OAuthScope[]): boolean {
  const held = parseScope(grant.scope);
  return grant.resources.includes(consentKey) && scopes.every((s) => held.includes(s));
}

/** Whether two scope strings name the same scopes. */
function sameScopes(a: string, b: string): boolean {
  return scopeString(parseScope(a).sort()) === scopeString(parseScope(b).sort());
}

/** The ticked `scope` checkboxes of a consent form (one value, several, or none). */
function ticked(field: unknown): string[] {
  if (typeof field === 'string') return [field];
  return Array.isArray(field) ? field.filter((v): v is string => typeof v === 'string') : [];
}

/** A parsed form or JSON body as plain fields (anything else: no fields). */
export function formOf(body: unknown): Record<string, unknown> {
  return typeof body === 'object' && body !== null ? Object.fromEntries(Object.entries(body)) : {};
}

/**
 * The CSP `form-action` source of the consent form's redirect: the validated redirect URI
 * as narrow as CSP allows (the sign-in page uses the same helper).
 */
function formTargetOf(redirectUri: string): string | undefined {
  return cspSourceOf(redirectUri);
}
