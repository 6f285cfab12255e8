import { createServer, type Server } from 'node:http';
import {
  createAppMetrics,
  createBusCallMetrics,
  instrumentHandlers,
  instrumentRequestListener,
  mcpMethodOf,
  METRIC_NAMES,
  outcomeOf,
  registerGauge,
  registerQueueDepth,
  routeOf,
  timeAsync,
} from './metrics';
import { startOpsServer } from './ops-server';

class CodedError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/** One sample of the text exposition, e.g. `name_count{a="b"} 2`, as `{ labels, value }`. */
interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of metric `name` (exact name: `x_count`, not `x_count_total`). */
async function samples(render: () => Promise<{ body: string }>, name: string): Promise<Sample[]> {
  const { body } = await render();
  const out: Sample[] = [];
  for (const line of body.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] ?? ''] = pair[2] ?? '';
    out.push({ labels, value: Number(match[3]) });
  }
  return out;
}

/** `http://127.0.0.1:<port>` of a listening server. */
function baseUrl(server: Server): string {
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('server is not listening on TCP');
  return `http://127.0.0.1:${address.port}`;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return baseUrl(server);
}

describe('createAppMetrics', () => {
  it('renders process metrics labelled with the app, in the Prometheus text format', async () => {
    const metrics = createAppMetrics({ app: 'dag-service' });
    const page = await metrics.render();
    expect(page.contentType).toMatch(/^text\/plain/);
    expect(page.body).toMatch(/^process_cpu_user_seconds_total\{app="dag-service"\} /m);
    expect(page.body).toMatch(/^process_resident_memory_bytes\{app="dag-service"\} /m);
    expect(page.body).toMatch(/^nodejs_eventloop_lag_seconds\{app="dag-service"\} /m);
  });

  it('leaves process metrics out when asked to', async () => {
    const page = await createAppMetrics({ app: 'x', processMetrics: false }).render();
    expect(page.body).not.toContain('process_cpu');
  });
});

describe('outcomeOf', () => {
  it.each([
    [new CodedError('resource_unavailable'), 'resource_unavailable'],
    [new CodedError('invalid_tool_input'), 'invalid_tool_input'],
    [new CodedError('ECONNREFUSED'), 'internal_error'],
    [new CodedError('23505'), 'internal_error'],
    [new CodedError('a'.repeat(60)), 'internal_error'],
    [new Error('boom'), 'internal_error'],
    ['a string', 'internal_error'],
    [undefined, 'internal_error'],
  ])('%p → %s', (error, outcome) => {
    expect(outcomeOf(error)).toBe(outcome);
  });
});

describe('timeAsync', () => {
  it('passes the result through and reports ok with a duration', async () => {
    const report = jest.fn();
    await expect(timeAsync(async () => 42, report)).resolves.toBe(42);
    expect(report).toHaveBeenCalledWith('ok', expect.any(Number));
    expect(report.mock.calls[0]?.[1]).toBeGreaterThanOrEqual(0);
  });

  it('rethrows the error and reports its code', async () => {
    const report = jest.fn();
    const error = new CodedError('conflict');
    await expect(timeAsync(async () => Promise.reject(error), report)).rejects.toBe(error);
    expect(report).toHaveBeenCalledWith('conflict', expect.any(Number));
  });
});

describe('createBusCallMetrics', () => {
  it('counts calls by service, op and outcome', async () => {
    const metrics = createAppMetrics({ app: 'mcp-gateway', processMetrics: false });
    const bus = createBusCallMetrics(metrics.registry);
    await bus.time('dag', 'dag.get', async () => 'ok');
    await bus.time('dag', 'dag.get', async () => 'ok');
    await expect(bus.time('run', 'run.start', async () => Promise.reject(new CodedError('resource_unavailable')))).rejects.toThrow();
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

describe('instrumentHandlers', () => {
  const handlers = {
    'dag.get': async (payload: { name: string }) => ({ name: payload.name }),
    'dag.upsert': async (): Promise<{ ok: true }> => {
      throw new CodedError('conflict');
    },
  };

  it('keeps the map (own keys, results, errors) and records each run', async () => {
    const metrics = createAppMetrics({ app: 'dag-service', processMetrics: false });
    const wrapped = instrumentHandlers(metrics.registry, 'dag', handlers);
    expect(Object.hasOwn(wrapped, 'dag.get')).toBe(true);
    expect(Object.keys(wrapped)).toEqual(['dag.get', 'dag.upsert']);
    await expect(wrapped['dag.get']({ name: 'hello' })).resolves.toEqual({ name: 'hello' });
    await expect(wrapped['dag.upsert']()).rejects.toThrow('conflict');
    expect(wrapped['dag.get']).toBe(wrapped['dag.get']);
    expect(await samples(metrics.render, `${METRIC_NAMES.busJobDuration}_count`)).toEqual([
      { labels: { app: 'dag-service', service: 'dag', op: 'dag.get', outcome: 'ok' }, value: 1 },
      { labels: { app: 'dag-service', service: 'dag', op: 'dag.upsert', outcome: 'conflict' }, value: 1 },
    ]);
  });
});

describe('registerQueueDepth', () => {
  it('reads counts at scrape time and leaves out a queue whose read fails or hangs', async () => {
    const metrics = createAppMetrics({ app: 'dag-service', processMetrics: false });
    let waiting = 3;
    registerQueueDepth(metrics.registry, 'dag-service', async () => ({ waiting, active: 1 }));
    registerQueueDepth(metrics.registry, 'broken', async () => Promise.reject(new Error('redis down')));
    registerQueueDepth(metrics.registry, 'slow', () => new Promise(() => undefined), 50);
    const name = METRIC_NAMES.busQueueJobs;
    expect(await samples(metrics.render, name)).toEqual([
      { labels: { app: 'dag-service', queue: 'dag-service', state: 'waiting' }, value: 3 },
      { labels: { app: 'dag-service', queue: 'dag-service', state: 'active' }, value: 1 },
    ]);
    waiting = 0;
    expect(await samples(metrics.render, name)).toContainEqual({ labels: { app: 'dag-service', queue: 'dag-service', state: 'waiting' }, value: 0 });
  });
});

describe('registerGauge', () => {
  it('reads the value at scrape time', async () => {
    const metrics = createAppMetrics({ app: 'mcp-gateway', processMetrics: false });
    let sessions = 2;
    registerGauge(metrics.registry, 'dagu_mcp_sessions', 'Open MCP sessions.', () => sessions);
    expect(await samples(metrics.render, 'dagu_mcp_sessions')).toEqual([{ labels: { app: 'mcp-gateway' }, value: 2 }]);
    sessions = 5;
    expect(await samples(metrics.render, 'dagu_mcp_sessions')).toEqual([{ labels: { app: 'mcp-gateway' }, value: 5 }]);
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
        if (req.url === '/mcp') Object.assign(req, { baseUrl: '/mcp', route: { path: '/' }, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
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
        { labels: { app: 'mcp-gateway', route: '/mcp', method: 'POST', status: '200', mcp_method: 'tools/list' }, value: 1 },
        { labels: { app: 'mcp-gateway', route: 'unmatched', method: 'GET', status: '404', mcp_method: '' }, value: 1 },
      ]);
    } finally {
      server.close();
    }
  });
});

describe('startOpsServer /metrics', () => {
  it('serves /metrics beside the probes', async () => {
    const metrics = createAppMetrics({ app: 'wiki-service' });
    const server = await startOpsServer({ port: 0, host: '127.0.0.1', checks: { ok: () => true }, metrics: metrics.render });
    const base = baseUrl(server);
    try {
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0.0.4/);
      expect(await res.text()).toContain('process_resident_memory_bytes{app="wiki-service"}');
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
    } finally {
      server.close();
    }
  });

  it('serves /metrics only when no checks are given (the gateway metrics port)', async () => {
    const metrics = createAppMetrics({ app: 'mcp-gateway', processMetrics: false });
    const server = await startOpsServer({ port: 0, host: '127.0.0.1', metrics: metrics.render });
    const base = baseUrl(server);
    try {
      expect((await fetch(`${base}/metrics`)).status).toBe(200);
      expect((await fetch(`${base}/healthz`)).status).toBe(404);
      expect((await fetch(`${base}/readyz`)).status).toBe(404);
    } finally {
      server.close();
    }
  });

  it('answers 500 when rendering fails, and 404 for /metrics when not configured', async () => {
    const failing = await startOpsServer({ port: 0, host: '127.0.0.1', metrics: async () => Promise.reject(new Error('boom')) });
    const plain = await startOpsServer({ port: 0, host: '127.0.0.1', checks: {} });
    try {
      expect((await fetch(`${baseUrl(failing)}/metrics`)).status).toBe(500);
      expect((await fetch(`${baseUrl(plain)}/metrics`)).status).toBe(404);
    } finally {
      failing.close();
      plain.close();
    }
  });
});
