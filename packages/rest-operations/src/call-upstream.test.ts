import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AddressRanges, OutboundAllowList } from '@dagu-mcp/runtime';
import { buildUpstreamRequest } from './build-request';
import { callUpstream, UpstreamFailure } from './call-upstream';
import { OperationVersionSpecSchema } from './operation';
import { resultOfFailure, resultOfResponse } from './tool-result';

/** A real local upstream (no mock of the HTTP client): routes by path, records what it got. */
type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const received: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
let upstream: Server;
let other: Server;
let base: string;
let otherBase: string;
let flaky = 0;
const timers: NodeJS.Timeout[] = [];

const routes: Record<string, Handler> = {
  '/json': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"n":3}'),
  '/echo': (req, res, body) =>
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, body })),
  '/missing': (_req, res) =>
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such refund"}'),
  '/boom': (_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('x'.repeat(10_000)),
  '/forbidden': (_req, res) => res.writeHead(403).end('bad key'),
  '/slow': (_req, res) => {
    timers.push(setTimeout(() => res.writeHead(200).end('late'), 3000));
  },
  '/huge': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = 'y'.repeat(64 * 1024);
    let sent = 0;
    const write = (): void => {
      while (sent < 200 && res.write(chunk)) sent++;
      if (sent >= 200) res.end();
      else res.once('drain', write);
    };
    write();
  },
  '/same-origin-redirect': (_req, res) => res.writeHead(302, { location: '/json' }).end(),
  '/flaky': (_req, res) => {
    flaky++;
    if (flaky < 3) res.writeHead(503).end('busy');
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"after":3}');
  },
};

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (path === '/cross-host-redirect') return res.writeHead(302, { location: `${otherBase}/json` }).end();
      const route = routes[path];
      if (route === undefined) return res.writeHead(404).end();
      route(req, res, body);
    });
  });
  other = createServer((_req, res) => res.writeHead(200).end('other host'));
  [base, otherBase] = await Promise.all([listen(upstream), listen(other)]);
});
afterAll(async () => {
  for (const timer of timers) clearTimeout(timer);
  upstream.closeAllConnections();
  other.closeAllConnections();
  await Promise.all([new Promise((r) => upstream.close(r)), new Promise((r) => other.close(r))]);
});

function request(path: string, method: 'GET' | 'POST' = 'GET', input: Record<string, unknown> = {}) {
  const spec = OperationVersionSpecSchema.parse({
    upstream: 'local',
    method,
    pathTemplate: path,
    arguments: method === 'POST' ? { note: { in: 'body' } } : {},
    inputSchema: { type: 'object', properties: method === 'POST' ? { note: {} } : {} },
  });
  return buildUpstreamRequest(
    'op',
    spec,
    { name: 'local', baseUrl: base, credential: { type: 'bearer', token: 's3' } },
    input,
  );
}

// The local upstream is on loopback: reached only because the deployment's ranges hold 127.0.0.1.
const setting = 'OUTBOUND_ALLOW_CIDRS';
const reachable = { ranges: AddressRanges.parse(['127.0.0.1/32']), setting };
const allow = new OutboundAllowList(['127.0.0.1']);
const options = { timeoutMs: 1000, maxBytes: 64 * 1024, retries: 0, allow, reachable };

test('loopback outside the deployment ranges is refused whatever the allow-list names (the SSRF guard)', async () => {
  const before = received.length;
  const none = { ranges: AddressRanges.NONE, setting };
  for (const list of [[], ['localhost'], ['127.0.0.1'], ['127.0.0.0/8']]) {
    const refused = await callUpstream(request('/json'), {
      ...options,
      allow: new OutboundAllowList(list),
      reachable: none,
    }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: 'address_refused', refused: { address: '127.0.0.1', rule: 'loopback' } });
    expect((refused as Error).message).toBe(
      'The upstream address is refused: 127.0.0.1 is loopback and not in OUTBOUND_ALLOW_CIDRS.',
    );
  }
  // Inside the ranges, the allow-list still narrows: a list that does not cover the address refuses it.
  const offList = await callUpstream(request('/json'), {
    ...options,
    allow: new OutboundAllowList(['10.0.0.0/8']),
  }).catch((e: unknown) => e);
  expect(offList).toMatchObject({ kind: 'address_refused', refused: { rule: 'allow-list' } });
  expect(received.length).toBe(before);
  // An empty allow-list with the address inside the ranges reaches it.
  expect((await callUpstream(request('/json'), { ...options, allow: new OutboundAllowList([]) })).status).toBe(200);
});

test('JSON answers become structured content with the status; the credential reaches the upstream', async () => {
  const response = await callUpstream(request('/json'), options);
  const result = resultOfResponse('op', response);
  expect(result.isError).toBe(false);
  expect(result.structuredContent).toMatchObject({ status: 200, body: { ok: true, n: 3 }, truncated: false });
  expect(result.content[0]?.text).toContain('HTTP 200');
  expect(received.at(-1)?.headers.authorization).toBe('Bearer s3');

  const echo = resultOfResponse('op', await callUpstream(request('/echo', 'POST', { note: 'hi' }), options));
  expect(echo.structuredContent).toMatchObject({ status: 201, body: { method: 'POST', body: '{"note":"hi"}' } });
});

test('4xx and 5xx are isError with the status and a trimmed body; 401/403 is a configuration problem', async () => {
  const missing = resultOfResponse('op', await callUpstream(request('/missing'), options));
  expect(missing).toMatchObject({ isError: true, structuredContent: { status: 404 } });
  // An upstream's JSON error body comes back as JSON (docs/decisions.md "Messages a newcomer meets").
  expect(missing.structuredContent.body).toEqual({ error: 'no such refund' });
  const boom = resultOfResponse('op', await callUpstream(request('/boom'), options));
  expect(boom.structuredContent).toMatchObject({ status: 500, truncated: true });
  expect(String(boom.structuredContent.body)).toHaveLength(2000);
  const forbidden = resultOfResponse('op', await callUpstream(request('/forbidden'), options));
  expect(forbidden.structuredContent).toMatchObject({ status: 403, configurationProblem: true });
  // A non-JSON error body stays text.
  expect(forbidden.structuredContent.body).toBe('bad key');
});

test('a slow upstream is a named timeout; a refused connection a named network failure', async () => {
  const slow = await callUpstream(request('/slow'), { ...options, timeoutMs: 300 }).catch((e: unknown) => e);
  expect(slow).toBeInstanceOf(UpstreamFailure);
  expect(resultOfFailure('op', slow as UpstreamFailure).structuredContent).toMatchObject({
    code: 'resource_unavailable',
    details: { operation: 'op', kind: 'timeout' },
  });
  const closed = buildUpstreamRequest(
    'op',
    OperationVersionSpecSchema.parse({
      upstream: 'local',
      method: 'GET',
      pathTemplate: '/',
      inputSchema: { type: 'object', properties: {} },
    }),
    { name: 'local', baseUrl: 'http://127.0.0.1:1' },
    {},
  );
  const refused = await callUpstream(closed, options).catch((e: unknown) => e);
  expect(refused).toMatchObject({ kind: 'network' });
});

test('a huge body is cut at the cap with truncated: true, without reading the rest', async () => {
  const response = await callUpstream(request('/huge'), { ...options, maxBytes: 100_000 });
  expect(response.truncated).toBe(true);
  expect(Buffer.byteLength(response.text)).toBe(100_000);
  const result = resultOfResponse('op', response);
  expect(result.structuredContent.truncated).toBe(true);
  expect(result.content[0]?.text).toContain('[truncated]');
});

test('a redirect within the origin is followed; one to another host is refused', async () => {
  const same = await callUpstream(request('/same-origin-redirect'), options);
  expect(same.status).toBe(200);
  const cross = await callUpstream(request('/cross-host-redirect'), options).catch((e: unknown) => e);
  expect(cross).toMatchObject({ kind: 'redirect_refused' });
});

test('retries only what it is told to: 503 twice then 200 with two retries', async () => {
  flaky = 0;
  const once = await callUpstream(request('/flaky'), options);
  expect(once.status).toBe(503);
  flaky = 0;
  const retried = await callUpstream(request('/flaky'), { ...options, retries: 2 });
  expect(retried).toMatchObject({ status: 200, attempts: 3 });
});
