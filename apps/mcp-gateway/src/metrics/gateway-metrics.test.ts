import { createServer, type Server } from 'node:http';
import { createAppMetrics, METRIC_NAMES } from '@dagu-mcp/runtime';
import { samples } from '../../../../packages/runtime/test-fixtures/metric-samples';
import { createBusCallMetrics } from './bus-call-metrics';
import { instrumentRequestListener, mcpMethodOf, routeOf } from './http-metrics';

class CodedError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('server is not listening on TCP');
  return `http://127.0.0.1:${address.port}`;
}

describe('createBusCallMetrics', () => {
  it('counts calls by service, op and outcome', async () => {
    const metrics = createAppMetrics({ app: 'mcp-gateway', processMetrics: false });
    const bus = createBusCallMetrics(metrics.registry);
    await bus.time('dag', 'dag.get', async () => 'ok');
    await bus.time('dag', 'dag.get', async () => 'ok');
    await expect(
      bus.time('run', 'run.start', async () => Promise.reject(new CodedError('resource_unavailable'))),
    ).rejects.toThrow();
    expect(await samples(metrics.render, `${METRIC_NAMES.busCallDuration}_count`)).toEqual([
      { labels: { app: 'mcp-gateway', service: 'dag', op: 'dag.get', outcome: 'ok' }, value: 2 },
      { labels: { app: 'mcp-gateway', service: 'run', op: 'run.start', outcome: 'resource_unavailable' }, value: 1 },
    ]);
  });

  it('is idempotent per registry (one histogram however often it is created)', () => {
    const metrics = createAppMetrics({ app: 'x', processMetrics: false });
    createBusCallMetrics(metrics.registry);
    expect(() => createBusCallMetrics(metrics.registry)).not.toThrow();
  });
});

describe('mcpMethodOf', () => {
  it.each([
    [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }, 'tools/call'],
    [{ jsonrpc: '2.0', method: 'notifications/initialized' }, 'notifications/initialized'],
    [{ jsonrpc: '2.0', id: 1, method: 'x'.repeat(80) }, 'other'],
    [{ jsonrpc: '2.0', id: 1, method: 7 }, 'other'],
    [[{ jsonrpc: '2.0', id: 1, method: 'ping' }], 'batch'],
    [{ jsonrpc: '2.0', id: 1, result: {} }, ''],
    [undefined, ''],
  ])('%p → %p', (body, method) => {
    expect(mcpMethodOf(body)).toBe(method);
  });
});

describe('routeOf', () => {
  it.each([
    [{ baseUrl: '/mcp', route: { path: '/' } }, '/mcp'],
    [{ baseUrl: '/api/v1', route: { path: '/dags/:name' } }, '/api/v1/dags/:name'],
    [{ baseUrl: '', route: { path: '/healthz' } }, '/healthz'],
    [{ baseUrl: '', route: { path: '/' } }, '/'],
    [{ baseUrl: '/api/v1', route: { path: /regex/ } }, 'unmatched'],
    [{ url: '/anything/the/client/sent' }, 'unmatched'],
  ])('%p → %s', (fields, route) => {
    expect(routeOf(fields)).toBe(route);
  });
});

describe('instrumentRequestListener', () => {
  it('records requests by route template, method, status and MCP method', async () => {
    const metrics = createAppMetrics({ app: 'mcp-gateway', processMetrics: false });
    const server = createServer(
      instrumentRequestListener(metrics.registry, (req, res) => {
        // What Express leaves on the request: the mount path, the matched route, the parsed body.
        if (req.url === '/mcp')
          Object.assign(req, {
            baseUrl: '/mcp',
            route: { path: '/' },
            body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          });
        res.statusCode = req.url === '/mcp' ? 200 : 404;
        res.end('{}');
      }),
    );
    const base = await listen(server);
    try {
      expect((await fetch(`${base}/mcp`, { method: 'POST', body: '{}' })).status).toBe(200);
      expect((await fetch(`${base}/no/such/${Math.random()}`)).status).toBe(404);
      await new Promise((resolve) => setImmediate(resolve));
      expect(await samples(metrics.render, `${METRIC_NAMES.httpRequestDuration}_count`)).toEqual([
        {
          labels: { app: 'mcp-gateway', route: '/mcp', method: 'POST', status: '200', mcp_method: 'tools/list' },
          value: 1,
        },
        { labels: { app: 'mcp-gateway', route: 'unmatched', method: 'GET', status: '404', mcp_method: '' }, value: 1 },
      ]);
    } finally {
      server.close();
    }
  });
});
