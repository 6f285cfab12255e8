import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { AccessDeniedError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import type { BrowserSession } from '../auth/browser-sessions';
import type { renderOAuthPage } from '../http/pages/oauth-pages';
import { browserSessionOf } from '../http/principal';
import { clientNameOf } from '../oauth/client-store';
import type { OAuthServer } from '../oauth/oauth-server';
import { redirectHost } from '../oauth/redirect-uris';
import {
  capScopes,
  OAUTH_SCOPES,
  parseScope,
  requestedScopes,
  SCOPE_DESCRIPTIONS,
  scopeString,
  type OAuthScope,
} from '../oauth/scopes';

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
});

/**
 * The authorize step after the SDK handler validated client and redirect URI
 * (issue 23 item 3): no session → the shared sign-in page, back here after;
 * a remembered consent covering the request → a code at once; otherwise the
 * consent page, whose form carries only an id of the pending request (kept
 * in Redis for 10 minutes, bound to the session) and the CSRF token.
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
    const asked = requestedScopes(params.scopes);
    const scopes = capScopes(asked, session.principal.role);
    if (scopes.length === 0) {
      throw new AccessDeniedError(`the role ${session.principal.role} allows none of the requested scopes`);
    }
    const pending: PendingAuthorization = {
      sessionId: session.sessionId,
      clientId: client.client_id,
      clientName: clientNameOf(client),
      redirectUri: params.redirectUri,
      codeChallenge: params.codeChallenge,
      state: params.state,
      scopes,
      resource: params.resource?.href ?? this.deps.server.addresses.mcpResource,
    };
    const grant = await this.deps.server.grants.find(session.userId, client.client_id);
    if (grant !== undefined && scopes.every((s) => parseScope(grant.scope).includes(s))) {
      // Remembered consent: the client asks for no more than it was granted.
      res.redirect(302, await this.allow(pending, session.userId));
      return;
    }
    const id = randomBytes(18).toString('base64url');
    await this.deps.redis.set(this.pendingKey(id), JSON.stringify(pending), 'EX', PENDING_TTL_SECONDS);
    const dropped = asked.filter((s) => !scopes.includes(s));
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
        scopes: scopes.map((s) => ({ name: s, description: SCOPE_DESCRIPTIONS[s] })),
        dropped: dropped.map((s) => ({ name: s, description: SCOPE_DESCRIPTIONS[s] })),
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
    if (form.decision === 'allow') {
      res.redirect(303, await this.allow(pending, session.userId));
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

  /** Records the consent and returns the redirect with a fresh code (RFC 9207: with `iss`). */
  async allow(pending: PendingAuthorization, userId: string): Promise<string> {
    const existing = await this.deps.server.grants.find(userId, pending.clientId);
    const union = [...new Set([...parseScope(existing?.scope), ...pending.scopes])];
    const grantId = await this.deps.server.grants.upsert({
      userId,
      clientId: pending.clientId,
      clientName: pending.clientName,
      scope: scopeString(parseScope(scopeString(union))),
    });
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

/** A parsed form or JSON body as plain fields (anything else: no fields). */
export function formOf(body: unknown): Record<string, unknown> {
  return typeof body === 'object' && body !== null ? Object.fromEntries(Object.entries(body)) : {};
}

/** The CSP `form-action` source of a redirect URI: its origin, or its scheme for a native app. */
function formTargetOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.origin !== 'null' ? url.origin : url.protocol;
}
