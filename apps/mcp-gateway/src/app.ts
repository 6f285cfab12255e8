import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { DaguError } from '@dagu-mcp/contracts';
import { runChecks, type Logger, type ReadinessCheck } from '@dagu-mcp/runtime';
import type { McpSessionManager } from './mcp/session-manager';
import { answerIdsOf, sendJsonRpcError } from './http/json-rpc-error';
import { requestId } from './http/request-id';
import { requestLog } from './http/request-log';
import { securityHeaders } from './http/browser-rules';
import { createRestRouter, type RestRoutes } from './http/rest-router';
import { buildOpenApiDocument } from './http/openapi';
import { rootHandler } from './http/home-page';
import { webConsoleRouter, type WebConsole } from './http/web-console';
import { mcpJsonContentType, mcpOriginGuard, type OriginGuardOptions } from './mcp/transport/http-guards';
import { requestIdOf } from './http/request-id';
import type { AuditEvent } from './audit/audit-log';
import { outageErrorOf } from './http/dependency-outage';
import { jsonBody, type JsonBodyOptions } from './http/json-body';
import { JsonParseThreads } from './http/json-parse-threads';
import { serverCard, serverJson, type ServerIdentity } from './mcp/server-card';

/** Default of {@link AppDeps.bodyParseThreadMinBytes}. */
const DEFAULT_BODY_PARSE_THREAD_MIN_BYTES = 64 * 1024;

/** What the gateway's HTTP app is built from (CONTRIBUTING §12: an app factory, no port). */
export interface AppDeps {
  readonly logger: Logger;
  readonly sessions: McpSessionManager;
  /** `BASE_PATH` of spec 020: MCP is served at `/mcp` and, when set, at `<basePath>/mcp`. */
  readonly basePath: string;
  readonly bodyLimitBytes: number;
  /**
   * JSON bodies of this many bytes or more are parsed on a thread (`BODY_PARSE_THREAD_MIN_BYTES`); default 64 KiB.
   */
  readonly bodyParseThreadMinBytes?: number;
  /** The threads those bodies are parsed on; default one, started at the first such body. */
  readonly jsonParseThreads?: JsonParseThreads;
  readonly version: string;
  /** The server card's and `server.json`'s registry name (`SERVER_REGISTRY_NAME`). */
  readonly registryName?: string;
  /** `PUBLIC_URL`; absent: the server card and `server.json` name the origin the request reached. */
  readonly publicUrl?: string;
  /** Express `trust proxy` (client addresses behind a load balancer). */
  readonly trustProxy: boolean | number;
  /** Readiness checks behind `GET /readyz` (Redis, PostgreSQL, migrations). */
  readonly readiness: Record<string, ReadinessCheck>;
  /** Authentication of `/mcp` (API keys need the `mcp` surface), run before any MCP handling. */
  readonly authenticateMcp: RequestHandler;
  /** Authentication of non-public `/api/v1` routes (API keys need the `rest_api` surface). */
  readonly authenticateRest: RequestHandler;
  readonly restRoutes: RestRoutes[];
  /** Records audit events (REST role refusals: `authz.denied`); default: none. */
  readonly audit?: (event: AuditEvent) => void;
  /**
   * Server-rendered pages (sign-in and, later, OAuth consent), mounted at the root and under
   * `BASE_PATH` before the 404; default: none.
   */
  readonly pages?: readonly RequestHandler[];
  /** Origin and Host checks of `/mcp` (DNS-rebinding protection); default: same-origin only, any Host. */
  readonly mcpOrigins?: OriginGuardOptions;
  /**
   * The built-in OAuth authorization server, when on: its router
   * (`/.well-known/*`, `…/oauth/*`, `/api/mcp/*`) and the scope check of MCP requests.
   */
  readonly oauth?: { readonly router: RequestHandler; readonly scopeGuard: RequestHandler };
  /**
   * Published agents' endpoints `/mcp/v1/{workspace}/{agent}`: `gate` resolves the
   * agent and authenticates its key (agents/agent-endpoint.ts); `sessions` serves them with the
   * transport of `/mcp` and the agents' dispatcher. Absent: no agent endpoints.
   */
  readonly agents?: { readonly gate: RequestHandler; readonly sessions: McpSessionManager };
  /** The built web console; absent: `/` answers the small HTML index and no fallback exists. */
  readonly web?: WebConsole;
}

/**
 * Builds the gateway's Express app: `/mcp` (Streamable HTTP POST/GET/DELETE),
 * `/api/v1` (REST), `/healthz`, `/readyz`; every error is JSON.
 */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', deps.trustProxy);
  const body: JsonBodyOptions = {
    limitBytes: deps.bodyLimitBytes,
    threadMinBytes: deps.bodyParseThreadMinBytes ?? DEFAULT_BODY_PARSE_THREAD_MIN_BYTES,
    threads: deps.jsonParseThreads ?? new JsonParseThreads(),
  };
  app.use(requestId());
  app.use(securityHeaders());
  app.use(requestLog(deps.logger));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const failing = await runChecks(deps.readiness);
    res
      .status(failing.length === 0 ? 200 : 503)
      .json(failing.length === 0 ? { status: 'ready' } : { status: 'not_ready', failing });
  });

  app.use(serverCardRouter(deps));
  if (deps.oauth !== undefined) app.use(deps.oauth.router);
  const mcpPaths = deps.basePath === '' ? ['/mcp'] : ['/mcp', `${deps.basePath}/mcp`];
  // Agent endpoints first: `/mcp/v1/...` must not meet `/mcp`'s own authentication.
  if (deps.agents !== undefined) {
    const agent = mcpRouter(deps, body, deps.agents.gate, deps.agents.sessions, { mergeParams: true });
    for (const path of mcpPaths) app.use(`${path}/v1/:workspace/:agent`, agent);
  }
  const mcp = mcpRouter(deps, body, deps.authenticateMcp, deps.sessions, {
    ...(deps.oauth !== undefined ? { scopeGuard: deps.oauth.scopeGuard } : {}),
  });
  for (const path of mcpPaths) app.use(path, mcp);

  const rest = createRestRouter({
    logger: deps.logger,
    parseJson: jsonBody({ ...body, type: 'application/json' }),
    authenticate: deps.authenticateRest,
    routes: deps.restRoutes,
    allowedOrigins: deps.mcpOrigins?.allowedOrigins ?? [],
    openApi: (routes) => buildOpenApiDocument(routes, { version: deps.version, basePath: deps.basePath }),
    ...(deps.audit !== undefined ? { audit: deps.audit } : {}),
  });
  app.use('/api/v1', rest);
  if (deps.basePath !== '') app.use(`${deps.basePath}/api/v1`, rest);

  for (const pages of deps.pages ?? []) {
    app.use(pages);
    if (deps.basePath !== '') app.use(deps.basePath, pages);
  }

  const root = rootHandler(deps.basePath, deps.version, deps.web);
  app.get('/', root);
  if (deps.basePath !== '') app.get([deps.basePath, `${deps.basePath}/`], root);
  if (deps.web !== undefined) app.use(webConsoleRouter(deps.web, deps.basePath));

  app.use((req: Request, res: Response) => {
    res.status(404).json({
      code: 'resource_not_found',
      message: `No route for ${req.method} ${req.path}.`,
      requestId: requestIdOf(res),
    });
  });
  return app;
}

/**
 * The server card (SEP-2127: `/.well-known/mcp/server-card.json`, and `/.well-known/mcp.json`
 * where SEP-1649 put it) and the registry's `server.json` (`/.well-known/mcp/server.json`):
 * public, cacheable for an hour, readable from any origin (mcp/server-card.ts).
 */
function serverCardRouter(deps: AppDeps): express.Router {
  const router = express.Router();
  const identity = (req: Request): ServerIdentity => ({
    name: deps.registryName ?? 'local.dagu-mcp/gateway',
    version: deps.version,
    // Without PUBLIC_URL, the origin the client reached (behind a proxy: per `trust proxy`).
    mcpUrl: `${deps.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}${deps.basePath}`}/mcp`,
  });
  const serve = (build: (identity: ServerIdentity) => Record<string, unknown>) => (req: Request, res: Response) => {
    res.set({ 'Cache-Control': 'public, max-age=3600', 'Access-Control-Allow-Origin': '*' }).json(build(identity(req)));
  };
  router.get(['/.well-known/mcp/server-card.json', '/.well-known/mcp.json'], serve(serverCard));
  router.get('/.well-known/mcp/server.json', serve(serverJson));
  return router;
}

/**
 * One Streamable HTTP endpoint (`/mcp`, or a published agent's): Origin/Host
 * checks before authentication, Content-Type before the body is read, then
 * POST/GET/DELETE to `sessions`.
 */
function mcpRouter(
  deps: AppDeps,
  body: JsonBodyOptions,
  authenticate: RequestHandler,
  sessions: McpSessionManager,
  options: { mergeParams?: boolean; scopeGuard?: RequestHandler } = {},
): express.Router {
  const mcp = express.Router({ mergeParams: options.mergeParams === true });
  // Origin/Host before authentication; Content-Type before the body is read (Streamable HTTP).
  mcp.use(mcpOriginGuard(deps.mcpOrigins ?? { allowedOrigins: [], allowedHosts: undefined }));
  mcp.use(authenticate);
  mcp.use(mcpJsonContentType());
  const parseBody = jsonBody(body);
  mcp.use(parseBody);
  // OAuth scopes are checked once the JSON-RPC method is known.
  if (options.scopeGuard !== undefined) mcp.use(options.scopeGuard);
  mcp.all('/', async (req: Request, res: Response, next: NextFunction) => {
    if (!['POST', 'GET', 'DELETE'].includes(req.method)) {
      res.setHeader('Allow', 'GET, POST, DELETE');
      return sendJsonRpcError(res, 405, -32000, 'Method not allowed.', req.body);
    }
    try {
      await sessions.handle(req, res);
    } catch (err) {
      next(err);
    }
  });
  mcp.use(mcpErrorHandler(deps.logger, parseBody));
  return mcp;
}

/**
 * Body-parser and unexpected failures on the MCP endpoint, as JSON-RPC errors
 * that keep the request's id (a batch: one error per request) whenever the body
 * was readable. A Redis or PostgreSQL outage met before the request
 * reached its method (loading the session, authenticating) is
 * `resource_unavailable` with `details.dependency` and `details.requestId`, HTTP
 * 200 so that SDK clients hand it to the caller: an `isError` result for
 * `tools/call`, a JSON-RPC error -32005 otherwise (dagu-model §10). A failure met before the body was read (authentication, during an outage)
 * reads it first, with the endpoint's own parser and limit, to learn the id.
 */
function mcpErrorHandler(logger: Logger, parseBody: RequestHandler) {
  const answer = (err: unknown, req: Request, res: Response): void => {
    const body: unknown = req.body;
    const outage = outageErrorOf(err);
    if (outage !== undefined) return sendOutage(res, outage, body);
    logger.error({ err, requestId: requestIdOf(res) }, 'mcp request failed');
    sendJsonRpcError(res, 500, -32603, 'Internal error.', body);
  };
  return function mcpErrorHandler(err: unknown, req: Request, res: Response, next: NextFunction): void {
    if (res.headersSent) return next(err);
    const type = typeof err === 'object' && err !== null && 'type' in err ? err.type : undefined;
    // The body could not be read: no id to keep (JSON-RPC 2.0 §5).
    if (type === 'entity.parse.failed')
      return sendJsonRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON.', undefined);
    if (type === 'entity.too.large') return sendJsonRpcError(res, 413, -32600, 'Request body is too large.', undefined);
    if (req.body === undefined && req.method === 'POST') {
      // A body that cannot be read now is answered without an id: the failure is still the answer.
      return void parseBody(req, res, () => answer(err, req, res));
    }
    answer(err, req, res);
  };
}

/**
 * The outage answer of {@link mcpErrorHandler}, by request id ({@link answerIdsOf}): one
 * answer for a single message, one per request of a batch, `"id": null` only when no id was
 * readable.
 */
function sendOutage(res: Response, outage: DaguError, body: unknown): void {
  const object = outage.toServiceError();
  const data = { ...object, details: { ...(object.details ?? {}), requestId: requestIdOf(res) } };
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const answers = answerIdsOf(body).map((id) => {
    const message = messages.find((m) => typeof m === 'object' && m !== null && 'id' in m && m.id === id);
    const method = typeof message === 'object' && message !== null && 'method' in message ? message.method : undefined;
    if (method === 'tools/call') {
      const result = { isError: true, content: [{ type: 'text', text: data.message }], structuredContent: data };
      return { jsonrpc: '2.0', id, result };
    }
    return { jsonrpc: '2.0', id, error: { code: -32005, message: data.message, data } };
  });
  const none = { jsonrpc: '2.0', id: null, error: { code: -32005, message: data.message, data } };
  res.status(200).json(Array.isArray(body) ? (answers.length > 0 ? answers : none) : (answers[0] ?? none));
}
