import type { Server } from 'node:http';
import {
  createAppMetrics,
  instrumentHandlers,
  METRIC_NAMES,
  outcomeOf,
  registerGauge,
  registerQueueDepth,
  timeAsync,
} from './metrics';
import { startOpsServer } from '../ops/ops-server';
import { samples } from '../../test-fixtures/metric-samples';

class CodedError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/** `http://127.0.0.1:<port>` of a listening server. */
function baseUrl(server: Server): string {
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('server is not listening on TCP');
  return `http://127.0.0.1:${address.port}`;
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
    expect(await samples(metrics.render, name)).toContainEqual({
      labels: { app: 'dag-service', queue: 'dag-service', state: 'waiting' },
      value: 0,
    });
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

describe('startOpsServer /metrics', () => {
  it('serves /metrics beside the probes', async () => {
    const metrics = createAppMetrics({ app: 'wiki-service' });
    const server = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      checks: { ok: () => true },
      metrics: metrics.render,
    });
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
    const failing = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      metrics: async () => Promise.reject(new Error('boom')),
    });
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
