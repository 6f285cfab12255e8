import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { durationHistogram, METRIC_NAMES, secondsSince, type Registry } from '@dagu-mcp/runtime';

/**
 * The gateway's HTTP request metrics (docs/architecture.md "Deployment"): the route
 * and MCP method labels, and the listener wrapper that records them. Only the
 * gateway serves HTTP to clients, so the MCP method list lives here.
 */

/** The MCP methods (spec 2025-06-18) counted by name; any other method is `other`. */
const MCP_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
]);

/**
 * The `mcp_method` label of a JSON-RPC body: its method when it is one of
 * the MCP methods, `other` for any other method, `batch` for an array,
 * empty for a body without a method (a response, or no body).
 */
export function mcpMethodOf(body: unknown): string {
  if (Array.isArray(body)) return 'batch';
  if (typeof body !== 'object' || body === null || !('method' in body)) return '';
  const method: unknown = body.method;
  return typeof method === 'string' && MCP_METHODS.has(method) ? method : 'other';
}

/**
 * The `route` label of a finished request: the Express route template that
 * answered it (`req.baseUrl` + `req.route.path`, e.g. `/api/v1/dags/:name`,
 * `/mcp`), or `unmatched` when no route did (404s of unknown paths), so
 * arbitrary URLs never become label values.
 */
export function routeOf(req: object): string {
  const route: unknown = Reflect.get(req, 'route');
  if (typeof route !== 'object' || route === null || !('path' in route) || typeof route.path !== 'string')
    return 'unmatched';
  const baseUrl: unknown = Reflect.get(req, 'baseUrl');
  const joined = `${typeof baseUrl === 'string' ? baseUrl : ''}${route.path}`;
  return joined.length > 1 ? joined.replace(/\/+$/, '') : joined;
}

/**
 * Wraps an HTTP request listener (e.g. an Express app) so that every request
 * is recorded in {@link METRIC_NAMES.httpRequestDuration} by route template,
 * method, status and, on MCP routes, the JSON-RPC method. A request whose
 * connection closed before the response finished has status `aborted`.
 *
 * @returns a listener for `http.createServer(listener)`
 */
export function instrumentRequestListener(registry: Registry, listener: RequestListener): RequestListener {
  const histogram = durationHistogram(
    registry,
    METRIC_NAMES.httpRequestDuration,
    'HTTP requests to the gateway, until the response ended.',
    ['route', 'method', 'status', 'mcp_method'],
  );
  return function meteredRequestListener(req: IncomingMessage, res: ServerResponse): void {
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const route = routeOf(req);
      const mcpMethod = route.endsWith('/mcp') ? mcpMethodOf(Reflect.get(req, 'body')) : '';
      const status = res.writableFinished ? String(res.statusCode) : 'aborted';
      histogram.observe(
        { route, method: req.method ?? 'UNKNOWN', status, mcp_method: mcpMethod },
        secondsSince(started),
      );
    });
    listener(req, res);
  };
}
