import type { z } from 'zod';
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { DaguError, roleAtLeast, type Role } from '@dagu-mcp/contracts';
import { accessOf, type RouteAccess, type RouteAction } from '../actions/route-roles';
import type { Logger } from '@dagu-mcp/runtime';
import { principalOf } from './principal';
import { restErrorHandler } from './rest-errors';
import { browserCredentialRule, foreignOriginGuard, noStore } from './browser-rules';
import type { AuditEvent } from '../audit/audit-log';
import { auditRestDenials } from './authz-denials';
import { restRequestScope } from './rest-request-scope';

export type { RouteAccess, RouteAction };

/**
 * What a route declares: what it does and what the OpenAPI document says
 * about it. `action` fixes who may call it: the bus op it serves (the op's
 * catalog role) or a gateway-local route of `LOCAL_ROUTE_ROLES`
 * (`actions/route-roles.ts`); no route writes a role of its own.
 * `body` / `query` are the zod schemas the handler validates with (they
 * become the document's JSON Schemas).
 */
export interface RouteSpec {
  readonly action: RouteAction;
  readonly summary: string;
  /** Longer OpenAPI description (fields of the answer worth naming). */
  readonly description?: string;
  readonly tag: string;
  readonly body?: z.ZodType;
  readonly query?: z.ZodType;
  /** Success status, default 200 (201 for creations, 204 for deletions). */
  readonly status?: number;
  /**
   * The route documents a `text/plain` body besides JSON (the wiki page
   * `PUT`): the browser rules let it through for PUT, PATCH and DELETE.
   */
  readonly textBody?: boolean;
}

/** A route as registered: method, Express path, its spec and who may call it (resolved from `spec.action`). */
export interface RegisteredRoute {
  readonly method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  readonly path: string;
  readonly spec: RouteSpec;
  readonly access: RouteAccess;
}

/** A REST handler; thrown `DaguError`s become JSON errors with the right status. */
export type RestHandler = (req: Request, res: Response) => Promise<void> | void;

/**
 * Registers REST routes. Every route states who may call it: a route cannot
 * be added without a role (issue: "every route later issues add is denied
 * unless it declares its role").
 */
export interface RestRouteRegistrar {
  get(path: string, spec: RouteSpec, handler: RestHandler): void;
  post(path: string, spec: RouteSpec, handler: RestHandler): void;
  put(path: string, spec: RouteSpec, handler: RestHandler): void;
  patch(path: string, spec: RouteSpec, handler: RestHandler): void;
  delete(path: string, spec: RouteSpec, handler: RestHandler): void;
}

/** A REST route module: auth, users, API keys, DAGs, runs, wiki … each adds its routes. */
export type RestRoutes = (routes: RestRouteRegistrar) => void;

/** Result of pinging one service over the bus: who answered and the round trip in ms, or the error code. */
export type ServiceProbes = Record<string, { ok: boolean; replica?: string; latencyMs?: number; error?: string }>;

/**
 * Builds the `/api/v1` router: the browser rules (a foreign `Origin` on a
 * state-changing request is refused; `Cache-Control: no-store`), JSON bodies
 * (`parseJson`: `application/json`, limit `BODY_LIMIT_BYTES`, large ones parsed on a thread), the route modules behind `authenticate` (API keys
 * need the `rest_api` surface), the browser-credential rule and their role
 * checks, a JSON 404 for anything else and JSON errors
 * `{code, message, …, requestId}` — never HTML.
 */
export function createRestRouter(opts: {
  logger: Logger;
  /** Reads `application/json` bodies into `req.body` (http/json-body.ts `jsonBody`). */
  parseJson: RequestHandler;
  authenticate: RequestHandler;
  routes: RestRoutes[];
  /** Origins besides the gateway's own allowed to send state-changing requests (`ALLOWED_ORIGINS`). */
  allowedOrigins?: readonly string[];
  /** Serves the OpenAPI document of the registered routes at `GET /openapi.json`. */
  openApi: (routes: readonly RegisteredRoute[]) => Record<string, unknown>;
  /** Records audit events: role refusals become `authz.denied` rows. */
  audit?: (event: AuditEvent) => void;
}): Router {
  const router = Router();
  if (opts.audit !== undefined) router.use(auditRestDenials(opts.audit));
  router.use(noStore());
  router.use(foreignOriginGuard(opts.allowedOrigins ?? []));
  router.use(opts.parseJson);
  router.use(restRequestScope());
  const registered: RegisteredRoute[] = [];
  const registrar = createRegistrar(router, opts.authenticate, registered);
  registrar.get(
    '/openapi.json',
    { action: 'meta.openapi', summary: 'This OpenAPI 3.1 document', tag: 'meta' },
    (_req, res) => {
      res.json(document);
    },
  );
  for (const add of opts.routes) add(registrar);
  const document = opts.openApi(registered);
  router.use((req, _res, next) => {
    next(new DaguError('resource_not_found', `No route for ${req.method} ${req.baseUrl}${req.path}.`));
  });
  router.use(restErrorHandler(opts.logger));
  return router;
}

function createRegistrar(
  router: Router,
  authenticate: RequestHandler,
  registered: RegisteredRoute[],
): RestRouteRegistrar {
  const add =
    (method: RegisteredRoute['method']) =>
    (path: string, spec: RouteSpec, handler: RestHandler): void => {
      const access = accessOf(spec.action);
      const chain: RequestHandler[] =
        access === 'public'
          ? []
          : [authenticate, browserCredentialRule({ textBody: spec.textBody === true }), requireRole(access)];
      router[method](path, ...chain, wrap(handler));
      registered.push({ method, path, spec, access });
    };
  return { get: add('get'), post: add('post'), put: add('put'), patch: add('patch'), delete: add('delete') };
}

/** 403 `unauthorized` unless the caller's role is `role` or above (dagu-model §9, §10: REST → HTTP 403). */
function requireRole(role: Role): RequestHandler {
  return function requireRole(_req: Request, res: Response, next: NextFunction): void {
    if (roleAtLeast(principalOf(res).role, role)) return next();
    next(new DaguError('unauthorized', `This operation needs the ${role} role or higher.`));
  };
}

function wrap(handler: RestHandler): RequestHandler {
  return function restHandler(req: Request, res: Response, next: NextFunction): void {
    Promise.resolve()
      .then(() => handler(req, res))
      .catch(next);
  };
}
