import express, { type Request, type Response, type Router } from 'express';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import { authenticateClient } from '@modelcontextprotocol/sdk/server/auth/middleware/clientAuth.js';
import type { OAuthMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { OAuthServer } from '../oauth/oauth-server';
import { ALL_SCOPES } from '../oauth/oauth-provider';
import { OAUTH_SCOPES } from '../oauth/scopes';
import { introspect } from './oauth-introspect';
import { readableOAuthErrors } from './oauth-error-text';

/** The authorization server metadata (RFC 8414 §2), with every endpoint below the issuer. */
export function authorizationServerMetadata(server: OAuthServer): OAuthMetadata {
  const a = server.addresses;
  return {
    issuer: a.issuer,
    authorization_endpoint: a.endpoint('authorize'),
    token_endpoint: a.endpoint('token'),
    registration_endpoint: a.endpoint('register'),
    revocation_endpoint: a.endpoint('revoke'),
    introspection_endpoint: a.endpoint('introspect'),
    jwks_uri: a.endpoint('jwks'),
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    introspection_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
  };
}

/** Protected Resource Metadata (RFC 9728 §2) of one MCP resource. */
export function protectedResourceMetadata(server: OAuthServer, resource: string): OAuthProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: [server.addresses.issuer],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Dagu MCP',
  };
}

/**
 * The authorization server's HTTP surface: metadata at the
 * RFC 8414 / RFC 9728 well-known paths with the issuer's or resource's path
 * inserted (and the same under `BASE_PATH`), the OpenID configuration, and the
 * MCP SDK's handlers mounted one by one under `…/oauth/*` (its all-in-one router
 * would put them at the origin root): register, authorize, token, revoke; plus
 * introspection (RFC 7662) and the JWKS, which the SDK does not provide. The
 * SDK's per-process rate limits are off: they count per replica and would refuse
 * tests and busy proxies; sign-in has the shared failure limiter instead.
 *
 * @param oauthPages the consent form and authorizations pages (http/pages/oauth-pages.ts, mounted by wiring/oauth-setup.ts)
 */
export function oauthRouter(server: OAuthServer, basePath: string, oauthPages: Router): Router {
  const router = express.Router();
  const a = server.addresses;
  const asMetadata = authorizationServerMetadata(server);
  const oidc = { ...asMetadata, subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['ES256'] };
  const prefixes = [...new Set(['', basePath, a.issuerPath])];

  for (const p of prefixes) {
    for (const issuerPath of new Set(['', a.issuerPath])) {
      router.use(`${p}/.well-known/oauth-authorization-server${issuerPath}`, exact(metadataHandler(asMetadata)));
      router.use(`${p}/.well-known/openid-configuration${issuerPath}`, exact(metadataHandler(oidc)));
    }
    router.use(`${p}/.well-known/oauth-protected-resource`, protectedResourceRoute(server, prefixes));
  }

  const endpoints = express.Router();
  endpoints.use(readableOAuthErrors());
  endpoints.use(
    '/register',
    clientRegistrationHandler({ clientsStore: server.provider.clientsStore, rateLimit: false }),
  );
  endpoints.use(
    '/authorize',
    issOnErrorRedirects(a.issuer),
    authorizationHandler({ provider: server.provider, rateLimit: false }),
  );
  endpoints.use('/token', tokenHandler({ provider: server.provider, rateLimit: false }));
  endpoints.use('/revoke', revocationHandler({ provider: server.provider, rateLimit: false }));
  endpoints.post(
    '/introspect',
    express.urlencoded({ extended: false }),
    authenticateClient({ clientsStore: server.provider.clientsStore }),
    introspect(server),
  );
  endpoints.get('/jwks', async (_req, res, next) => {
    try {
      res.setHeader('Cache-Control', 'public, max-age=300');
      res.json(await server.keys.jwks());
    } catch (err) {
      next(err);
    }
  });
  endpoints.use(oauthPages);
  for (const p of prefixes) router.use(`${p}/oauth`, endpoints);
  return router;
}

/** Serves a handler only at the mount path itself (not below it). */
function exact(handler: express.RequestHandler): express.RequestHandler {
  return (req, res, next) => (req.path === '/' || req.path === '' ? handler(req, res, next) : next());
}

/**
 * RFC 9728 §3.1: `/.well-known/oauth-protected-resource` (the main MCP endpoint)
 * and `/.well-known/oauth-protected-resource/<resource path>` for every MCP
 * resource OAuth serves now (a published agent whose sign-in policy is not
 * `keys`); the path may carry the issuer's path or not.
 */
function protectedResourceRoute(server: OAuthServer, prefixes: readonly string[]): Router {
  const router = express.Router();
  router.use((req: Request, res: Response, next) => {
    if (req.method !== 'GET' && req.method !== 'OPTIONS') return next();
    let path = req.path.replace(/\/+$/, '');
    const resource =
      path === ''
        ? server.addresses.mcpResource
        : (() => {
            for (const p of prefixes) {
              if (p !== '' && path.startsWith(`${p}/`)) path = path.slice(p.length);
            }
            return server.addresses.resourceForPath(path);
          })();
    if (resource === undefined) return next();
    // Open to browser-based clients, as the SDK's metadata handler is (it only answers at its own root).
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method === 'OPTIONS') return void res.status(204).end();
    // An agent's URL has metadata only while an agent that takes OAuth sign-in is published there.
    server.resources
      .describe(resource)
      .then(
        (described) => (described === undefined ? next() : res.json(protectedResourceMetadata(server, resource))),
        next,
      );
  });
  return router;
}

/** The `scope` of the 401 challenge: everything, so a client asks for all it may need. */
export const CHALLENGE_SCOPE = ALL_SCOPES;

/**
 * RFC 9207 on the SDK's own error redirects (`invalid_scope`, `invalid_target`, … raised
 * after the client and redirect URI were validated): adds `iss` to a redirect that
 * carries `error` and no `iss`. Our own redirects (code, Deny) set it already.
 */
function issOnErrorRedirects(issuer: string): express.RequestHandler {
  return (_req, res, next) => {
    const setHeader = res.setHeader.bind(res);
    res.setHeader = (name: string, value: number | string | readonly string[]) => {
      if (name.toLowerCase() === 'location' && typeof value === 'string' && URL.canParse(value)) {
        const url = new URL(value);
        if (url.searchParams.has('error') && !url.searchParams.has('iss')) {
          url.searchParams.set('iss', issuer);
          return setHeader(name, url.href);
        }
      }
      return setHeader(name, value);
    };
    next();
  };
}
