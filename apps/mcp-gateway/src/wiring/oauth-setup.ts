import express, { type Request, type RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { Logger, Pool, SecretBox } from '@dagu-mcp/runtime';
import { isLoopback, type GatewayConfig } from '../config';
import { oauthScopeGuard } from '../http/oauth-scope.middleware';
import { resolvePublicUrl } from '../oauth/addresses';
import { signInFormTarget } from '../oauth/authorize-target';
import { ALL_SCOPES } from '../oauth/oauth-provider';
import { createOAuthServer, type OAuthServer } from '../oauth/oauth-server';
import { authorizationRoutes } from '../routes/oauth-authorizations';
import { authorizeApi } from '../routes/oauth-authorize-api';
import { ConsentFlow } from '../routes/oauth-consent';
import { renderOAuthPage } from '../http/pages/oauth-pages';
import { sessionCookieOf } from '../http/pages/signin.page';
import { setBrowserSession } from '../http/principal';
import type { BrowserSessions } from '../auth/browser-sessions';
import { oauthRouter } from '../routes/oauth.routes';
import { LOGIN_STATE_CACHE_MS } from '../auth/login-sessions';
import type { UserRepository } from '../auth/user.repository';

/** The OAuth pieces the gateway wires into authentication and the app. */
export interface OAuthSetup {
  readonly server: OAuthServer;
  /** `/.well-known/*`, `…/oauth/*`, `/api/mcp/*`. */
  readonly router: RequestHandler;
  /** 403 `insufficient_scope` on `/mcp` (after the body is parsed). */
  readonly scopeGuard: RequestHandler;
  /**
   * For the sign-in page: the CSP source of the redirect its `next` may end in, when `next`
   * is a pending authorization with a valid client and redirect URI.
   */
  readonly signInFormTarget: (next: string) => Promise<string | undefined>;
  /** For `authenticate()` on MCP endpoints: the resource of a request and its 401 challenge. */
  readonly mcp: { resourceOf(req: Request): string | undefined; challenge(req: Request): string | undefined };
}

/**
 * Starts the built-in OAuth authorization server when `AUTH_MODE=builtin` and
 * `OAUTH=true`. Without `PUBLIC_URL` a loopback stack derives it from
 * `HOST`, `PORT` and `BASE_PATH`; any other stack leaves OAuth off and logs why
 * (API keys, login tokens and Basic keep working).
 *
 */
export function setupOAuth(deps: {
  config: GatewayConfig;
  pool: Pool;
  redis: Redis;
  box: SecretBox;
  users: UserRepository;
  logger: Logger;
  /** The shared browser sessions (builtin mode): sign-in for the authorize and authorizations pages. */
  browserSessions: BrowserSessions | undefined;
}): OAuthSetup | undefined {
  const { config, logger, browserSessions } = deps;
  if (config.AUTH_MODE !== 'builtin' || !config.OAUTH || browserSessions === undefined) return undefined;
  const resolved = resolvePublicUrl({
    publicUrl: config.PUBLIC_URL,
    host: config.HOST,
    port: config.PORT,
    basePath: config.BASE_PATH,
    loopback: isLoopback(config.HOST),
  });
  if ('problem' in resolved) {
    logger.warn({ reason: resolved.problem }, 'OAuth authorization server not started');
    return undefined;
  }
  const server = createOAuthServer({
    pool: deps.pool,
    redis: deps.redis,
    box: deps.box,
    users: deps.users,
    settings: {
      publicUrl: resolved.url,
      accessTokenTtlSeconds: config.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTtlSeconds: config.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
      refreshGraceSeconds: config.OAUTH_REFRESH_GRACE_SECONDS,
      revocationCheckMs: config.OAUTH_REVOCATION_CHECK_MS,
      signingKeyRotationDays: config.OAUTH_SIGNING_KEY_ROTATION_DAYS,
      metadataDocumentHosts: config.OAUTH_CIMD_ALLOWED_HOSTS,
      metadataDocumentAllowPrivate: config.OAUTH_CIMD_ALLOW_PRIVATE,
      prefix: config.BUS_PREFIX,
      userCacheMs: LOGIN_STATE_CACHE_MS,
    },
  });
  const basePath = config.BASE_PATH;
  const consent = new ConsentFlow({
    server,
    redis: deps.redis,
    prefix: config.BUS_PREFIX,
    basePath,
    render: renderOAuthPage,
  });
  server.provider.authorizePage = (client, params, res) => consent.authorize(client, params, res);
  const authorizations = authorizationRoutes({ server, basePath, render: renderOAuthPage });
  const pages = express.Router();
  pages.post('/consent', express.urlencoded({ extended: false }), (req, res, next) => {
    consent.decide(req, res).catch(next);
  });
  pages.use(authorizations.page);

  const router = express.Router();
  // The cookie is read only where the pages and their JSON endpoints are, never on `/mcp`.
  const mounts = [...new Set(['', basePath, server.addresses.issuerPath])];
  router.use(
    [...mounts.map((m) => `${m}/oauth`), ...mounts.map((m) => `${m}/api/mcp`)],
    readBrowserSession(browserSessions),
  );
  router.use(oauthRouter(server, basePath, pages));
  const api = express.Router();
  api.use(express.json({ limit: '16kb' }));
  api.use(authorizations.api);
  api.use(authorizeApi({ server, consent }));
  router.use('/api/mcp', api);
  if (basePath !== '') router.use(`${basePath}/api/mcp`, api);

  const resourceOf = (req: Request): string | undefined => {
    const mount =
      req.baseUrl.startsWith(`${basePath}/`) && basePath !== '' ? req.baseUrl.slice(basePath.length) : req.baseUrl;
    return server.addresses.resourceForPath(mount);
  };
  const metadataUrlOf = (req: Request): string | undefined => {
    const resource = resourceOf(req);
    return resource === undefined ? undefined : server.addresses.protectedResourceMetadataUrl(resource);
  };
  logger.info({ issuer: server.addresses.issuer }, 'OAuth authorization server on');
  return {
    server,
    router,
    scopeGuard: oauthScopeGuard(metadataUrlOf),
    signInFormTarget: (next) => signInFormTarget(server.provider.clientsStore, basePath, next),
    mcp: {
      resourceOf,
      challenge: (req) => {
        const url = metadataUrlOf(req);
        return url === undefined ? undefined : `Bearer resource_metadata="${url}", scope="${ALL_SCOPES}"`;
      },
    },
  };
}

/**
 * Reads the `dagu_session` cookie for the OAuth pages and JSON endpoints (never for
 * `/mcp`, which does not take the cookie): a valid session is recorded for
 * `browserSessionOf(res)`; none, expired or unknown leaves the request anonymous.
 */
function readBrowserSession(sessions: BrowserSessions): RequestHandler {
  return function readBrowserSession(req, res, next): void {
    const value = sessionCookieOf(req);
    if (value === undefined) return next();
    sessions
      .resolve(value)
      .then((session) => {
        if (session !== undefined) setBrowserSession(res, session);
        next();
      })
      .catch(next);
  };
}
