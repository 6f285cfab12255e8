import { createServer, type Server } from 'node:http';

/** A named readiness check; resolves true when that dependency is ready. */
export type ReadinessCheck = () => Promise<boolean> | boolean;

/**
 * Starts the small ops HTTP server every service has: `GET /healthz` (200
 * while the process is alive) and `GET /readyz` (200 when every check passes,
 * else 503 with the failing names), and `GET /metrics` (Prometheus text) when
 * `metrics` is given. Answers JSON; anything else is 404.
 *
 * @param opts.port    TCP port (0 picks a free one)
 * @param opts.host    bind address (default `0.0.0.0`: probes come from outside the pod)
 * @param opts.checks  readiness checks by name, e.g. `{redis, postgres, migrations}`;
 *   omitted: no `/healthz` nor `/readyz` (the gateway's metrics-only port)
 * @param opts.metrics renders `GET /metrics`, e.g. `AppMetrics.render`; omitted: no `/metrics`
 */
export async function startOpsServer(opts: {
  port: number;
  host?: string;
  checks?: Record<string, ReadinessCheck>;
  metrics?: () => Promise<{ contentType: string; body: string }>;
}): Promise<Server> {
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET') return send(405, { code: 'method_not_allowed' });
    const { checks, metrics } = opts;
    if (metrics !== undefined && req.url?.split('?')[0] === '/metrics') {
      void metrics().then(
        (page) => {
          res.writeHead(200, { 'content-type': page.contentType });
          res.end(page.body);
        },
        () => send(500, { code: 'internal_error' }),
      );
      return undefined;
    }
    if (checks === undefined) return send(404, { code: 'not_found' });
    if (req.url === '/healthz') return send(200, { status: 'ok' });
    if (req.url === '/readyz') {
      void runChecks(checks).then((failing) =>
        failing.length === 0 ? send(200, { status: 'ready' }) : send(503, { status: 'not_ready', failing }),
      );
      return undefined;
    }
    return send(404, { code: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(opts.port, opts.host ?? '0.0.0.0', resolve));
  return server;
}

/** Runs every check; returns the names of the ones that failed or threw. */
export async function runChecks(checks: Record<string, ReadinessCheck>): Promise<string[]> {
  const entries = Object.entries(checks);
  const results = await Promise.all(entries.map(async ([, check]) => Promise.resolve(check()).catch(() => false)));
  return entries.filter((_, i) => results[i] !== true).map(([name]) => name);
}
