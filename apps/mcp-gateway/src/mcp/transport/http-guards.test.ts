import { createServer, request, type Server } from 'node:http';
import express from 'express';
import {
  hostName,
  mcpJsonContentType,
  mcpOriginGuard,
  normalizeOrigin,
  originRulesFor,
  type OriginGuardOptions,
} from './http-guards';

/** A tiny app with the guards in front of a 200 handler, answering on 127.0.0.1. */
async function serve(options: OriginGuardOptions): Promise<{ server: Server; port: number }> {
  const app = express();
  app.use(mcpOriginGuard(options), mcpJsonContentType());
  app.all('/mcp', (_req, res) => void res.json({ ok: true }));
  const server: Server = await new Promise((resolve) => {
    const s = createServer(app).listen(0, '127.0.0.1', () => resolve(s));
  });
  const address = server.address();
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0 };
}

function call(
  port: number,
  headers: Record<string, string>,
  method = 'POST',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method,
        headers: { 'content-type': 'application/json', ...headers },
        agent: false,
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end('{}');
  });
}

describe('Origin and Host checks (Streamable HTTP §Security Warning; DNS rebinding)', () => {
  let loopback: { server: Server; port: number };
  let listed: { server: Server; port: number };
  beforeAll(async () => {
    loopback = await serve(originRulesFor({ HOST: '127.0.0.1', ALLOWED_ORIGINS: [], ALLOWED_HOSTS: [] }));
    listed = await serve(
      originRulesFor({ HOST: '0.0.0.0', ALLOWED_ORIGINS: ['https://app.example.com'], ALLOWED_HOSTS: [] }),
    );
  });
  afterAll(() => {
    loopback.server.close();
    listed.server.close();
  });

  test('no Origin passes; the own origin passes; a foreign origin is 403 as JSON', async () => {
    const own = `http://127.0.0.1:${loopback.port}`;
    expect((await call(loopback.port, {})).status).toBe(200);
    expect((await call(loopback.port, { origin: own })).status).toBe(200);
    const foreign = await call(loopback.port, { origin: 'http://evil.example.com' });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
  });

  test('bound to loopback, a foreign Host is 403 (rebinding); loopback names with any port pass', async () => {
    expect((await call(loopback.port, { host: 'evil.example.com', origin: 'http://evil.example.com' })).status).toBe(
      403,
    );
    expect((await call(loopback.port, { host: `localhost:${loopback.port}` })).status).toBe(200);
    expect((await call(loopback.port, { host: '[::1]:9' })).status).toBe(200);
  });

  test('with ALLOWED_ORIGINS only the listed origins pass, and no Host check off loopback', async () => {
    expect((await call(listed.port, { origin: 'https://app.example.com' })).status).toBe(200);
    expect((await call(listed.port, { origin: `http://127.0.0.1:${listed.port}` })).status).toBe(403);
    expect((await call(listed.port, { host: 'gateway.example.com' })).status).toBe(200);
  });

  test('a POST that is not application/json is 415 as JSON; charset parameters are fine; GET is not checked', async () => {
    const text = await call(loopback.port, { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    expect(JSON.parse(text.body)).toMatchObject({ error: { code: -32000 } });
    expect((await call(loopback.port, { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
    expect((await call(loopback.port, { 'content-type': 'text/plain' }, 'GET')).status).toBe(200);
  });
});

test('host names and origins are compared in canonical form', () => {
  expect(hostName('127.0.0.1:8080')).toBe('127.0.0.1');
  expect(hostName('[::1]:8080')).toBe('::1');
  expect(hostName('LocalHost')).toBe('localhost');
  expect(normalizeOrigin('HTTPS://App.Example.com:443')).toBe('https://app.example.com');
  expect(originRulesFor({ HOST: '10.0.0.5', ALLOWED_ORIGINS: [], ALLOWED_HOSTS: [] }).allowedHosts).toBeUndefined();
  expect(
    originRulesFor({ HOST: 'localhost', ALLOWED_ORIGINS: [], ALLOWED_HOSTS: ['gw.local:8080'] }).allowedHosts,
  ).toContain('gw.local');
});
