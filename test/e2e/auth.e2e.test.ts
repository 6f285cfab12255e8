/**
 * Authentication end to end (spec 020 §Authentication, §API-Key Surface;
 * dagu-model §8 audit, §9 roles, §10 role failures): the built stack with
 * AUTH_MODE=builtin, driven by the MCP SDK client and plain HTTP.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, freePort, startStack, type Stack } from './stack';
import { toolResult, type AnyCallToolResult } from './tool-result';
import { restCall, type RestInit, type RestReply } from './rest-call';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
let stack: Stack;
let adminToken: string;

const api = (path: string, init: RestInit & { base?: string } = {}): Promise<RestReply> =>
  restCall(init.base ?? stack.baseUrl, path, init);

async function createKey(
  role: string,
  surfaces: string[],
  extra: Record<string, unknown> = {},
): Promise<{ id: string; key: string }> {
  const res = await api('/api-keys', {
    method: 'POST',
    token: adminToken,
    body: { name: `${role}-${surfaces.join('+')}`, role, surfaces, ...extra },
  });
  expect(res.status).toBe(201);
  return { id: String(res.body?.id), key: String(res.body?.key) };
}

async function mcpStatus(
  headers: Record<string, string>,
  url = stack.mcpUrl,
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    }),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text, headers: res.headers };
}

beforeAll(async () => {
  stack = await startStack({
    AUTH_MODE: 'builtin',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    LOGIN_MAX_FAILURES_PER_USER: '3',
    LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
  });
  const login = await api('/auth/login', { method: 'POST', body: ADMIN });
  expect(login.status).toBe(200);
  adminToken = String(login.body?.token);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('credentials (020 §Authentication)', () => {
  test('login returns a signed token with expiry and the user', async () => {
    const login = await api('/auth/login', { method: 'POST', body: ADMIN });
    expect(login.body).toMatchObject({
      token: expect.any(String),
      expiresAt: expect.any(String),
      user: { username: 'admin', role: 'admin' },
    });
    const me = await api('/auth/me', { token: String(login.body?.token) });
    expect(me.body).toMatchObject({ subject: 'admin', role: 'admin', credentialType: 'token' });
  });

  test('no credential → 401 unauthenticated with a WWW-Authenticate challenge per scheme, on /mcp and /api/v1', async () => {
    const mcp = await mcpStatus({});
    expect(mcp.status).toBe(401);
    expect(mcp.body).toMatchObject({ code: 'unauthenticated' });
    const challenge = mcp.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain('Bearer');
    expect(challenge).toContain('Basic');
    const rest = await api('/auth/me');
    expect(rest.status).toBe(401);
    expect(rest.body).toMatchObject({ code: 'unauthenticated' });
  });

  test('login token and Basic credentials both open /mcp; the SDK client connects with the token', async () => {
    expect((await mcpStatus({ authorization: `Bearer ${adminToken}` })).status).toBe(200);
    const basic = `Basic ${Buffer.from(`${ADMIN.username}:${ADMIN.password}`).toString('base64')}`;
    expect((await mcpStatus({ authorization: basic })).status).toBe(200);
    const client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${adminToken}` });
    expect((await client.listTools()).tools).toHaveLength(3);
    await client.close();
  });

  test('?token= is a fallback only without an Authorization header', async () => {
    expect((await mcpStatus({}, `${stack.mcpUrl}?token=${adminToken}`)).status).toBe(200);
    const withBadHeader = await mcpStatus(
      { authorization: 'Bearer not-a-token' },
      `${stack.mcpUrl}?token=${adminToken}`,
    );
    expect(withBadHeader.status).toBe(401);
  });

  test('?token= never reaches Redis (no job, key or value carries it)', async () => {
    const { key } = await createKey('viewer', ['mcp']);
    const client = await connectClient(`${stack.mcpUrl}?token=${key}`);
    await client.callTool({ name: 'dagu_read', arguments: { target: 'dags' } });
    await client.close();
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      const keys = await redis.keys(`e2e-${stack.id}*`);
      for (const k of keys) {
        const type = await redis.type(k);
        const dump =
          type === 'hash'
            ? JSON.stringify(await redis.hgetall(k))
            : type === 'string'
              ? String(await redis.get(k))
              : type === 'list'
                ? JSON.stringify(await redis.lrange(k, 0, -1))
                : '';
        expect(dump).not.toContain(key);
      }
    } finally {
      redis.disconnect();
    }
  });
});

describe('API keys and surfaces (020 §API-Key Surface)', () => {
  test('a key is shown once, listed without its secret, and revocable', async () => {
    const created = await createKey('viewer', ['mcp', 'rest_api']);
    expect(created.key.startsWith('dagu_')).toBe(true);
    const list = await api('/api-keys', { token: adminToken });
    const items = list.body?.items as Array<Record<string, unknown>>;
    const item = items.find((i) => i.id === created.id);
    expect(item).toMatchObject({ prefix: created.key.slice(0, 13), role: 'viewer', surfaces: ['mcp', 'rest_api'] });
    expect(JSON.stringify(list.body)).not.toContain(created.key);
    expect((await api(`/api-keys/${created.id}`, { method: 'DELETE', token: adminToken })).status).toBe(204);
    expect((await api('/auth/me', { token: created.key })).status).toBe(401);
  });

  test('an mcp-only key is refused by REST; a rest_api-only key is refused by MCP (403 invalid_api_key_surface)', async () => {
    const mcpOnly = await createKey('viewer', ['mcp']);
    const restOnly = await createKey('viewer', ['rest_api']);
    expect((await mcpStatus({ authorization: `Bearer ${mcpOnly.key}` })).status).toBe(200);
    const rest = await api('/auth/me', { token: mcpOnly.key });
    expect(rest.status).toBe(403);
    expect(rest.body).toMatchObject({ code: 'invalid_api_key_surface' });
    expect((await api('/auth/me', { token: restOnly.key })).status).toBe(200);
    const mcp = await mcpStatus({ authorization: `Bearer ${restOnly.key}` });
    expect(mcp.status).toBe(403);
    expect(mcp.body).toMatchObject({ code: 'invalid_api_key_surface' });
  });

  test('revoked and expired keys are refused at once on a second gateway replica', async () => {
    const port = await freePort();
    const replica = await stack.spawnApp('mcp-gateway', { PORT: String(port), AUTH_MODE: 'builtin' });
    const second = `http://127.0.0.1:${port}`;
    try {
      // Up to 60 s: a replica boots in about a second on a quiet machine, far slower on a loaded one.
      for (let i = 0; i < 600 && (await fetch(`${second}/healthz`).catch(() => undefined))?.status !== 200; i++)
        await new Promise((r) => setTimeout(r, 100));
      const key = await createKey('viewer', ['rest_api']);
      expect((await api('/auth/me', { token: key.key, base: second })).status).toBe(200); // cached on replica 2
      expect((await api(`/api-keys/${key.id}`, { method: 'DELETE', token: adminToken })).status).toBe(204); // revoked via replica 1
      expect((await api('/auth/me', { token: key.key, base: second })).status).toBe(401);

      const expiring = await createKey('viewer', ['rest_api'], {
        expiresAt: new Date(Date.now() + 1500).toISOString(),
      });
      expect((await api('/auth/me', { token: expiring.key, base: second })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1700));
      expect((await api('/auth/me', { token: expiring.key, base: second })).status).toBe(401);
    } finally {
      replica.kill('SIGTERM');
    }
  }, 120_000);
});

describe('roles (dagu-model §9, §10)', () => {
  const SPEC = 'steps:\n  - name: hello\n    run: echo hello\n';

  test.each([
    ['viewer', { read: true, preview: true, apply: false, execute: false }],
    ['operator', { read: true, preview: true, apply: false, execute: true }],
    ['developer', { read: true, preview: true, apply: true, execute: true }],
  ])('%s', async (role, allowed) => {
    const { key } = await createKey(role, ['mcp']);
    const client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${key}` });
    const denied = (r: AnyCallToolResult): boolean => {
      const result = toolResult(r);
      return result.isError === true && result.structuredContent?.code === 'unauthorized';
    };
    const read = await client.callTool({ name: 'dagu_read', arguments: { target: 'reference' } });
    expect(denied(read)).toBe(!allowed.read);
    const preview = await client.callTool({ name: 'dagu_change', arguments: { name: `roles-${role}`, spec: SPEC } });
    expect(denied(preview)).toBe(!allowed.preview);
    const apply = await client.callTool({
      name: 'dagu_change',
      arguments: { name: `roles-${role}`, spec: SPEC, mode: 'apply' },
    });
    expect(denied(apply)).toBe(!allowed.apply);
    const execute = await client.callTool({
      name: 'dagu_execute',
      arguments: { action: 'stop', name: 'roles', dagRunId: 'r1' },
    });
    expect(denied(execute)).toBe(!allowed.execute);
    await client.close();
  });

  test('admin-only REST routes answer 403 unauthorized to other roles', async () => {
    const { key } = await createKey('manager', ['rest_api']);
    const res = await api('/api-keys', { token: key });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'unauthorized' });
  });
});

describe('audit (dagu-model §8)', () => {
  test('a session leaves tool-call and resource-read events with actor, credential type and outcome', async () => {
    const { key } = await createKey('viewer', ['mcp']);
    const client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${key}` });
    await client.callTool({ name: 'dagu_read', arguments: { target: 'reference', name: 'tools' } });
    await client.callTool({ name: 'dagu_change', arguments: { name: 'audit-x', spec: 'steps: []', mode: 'apply' } });
    await expect(client.readResource({ uri: 'dagu://nope/x' })).rejects.toBeInstanceOf(McpError);
    await client.close();
    await new Promise((r) => setTimeout(r, 500)); // the audit log flushes every 200 ms
    const res = await api('/audit?category=mcp&limit=500', { token: adminToken });
    const events = (res.body?.items as Array<Record<string, unknown>>).filter((e) => e.actor === 'api_key:viewer-mcp');
    const actions = events.map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'mcp.tool_call.received',
        'mcp.tool_call.succeeded',
        'mcp.tool_call.denied',
        'mcp.resource.read.failed',
      ]),
    );
    expect(events.every((e) => e.credentialType === 'api_key')).toBe(true);
    expect(JSON.stringify(res.body)).not.toContain(key);
  });
});

describe('brute force', () => {
  test('failed logins are limited per username with 429 and Retry-After; another user is unaffected', async () => {
    for (let i = 0; i < 3; i++) {
      expect(
        (await api('/auth/login', { method: 'POST', body: { username: 'victim', password: 'wrong' } })).status,
      ).toBe(401);
    }
    const blocked = await api('/auth/login', { method: 'POST', body: { username: 'victim', password: 'wrong' } });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await api('/auth/login', { method: 'POST', body: ADMIN })).status).toBe(200);
  });
});

describe('other modes', () => {
  test('AUTH_MODE=none refuses to start on a non-loopback address, saying why', async () => {
    const child = spawn(process.execPath, [join(__dirname, '..', '..', 'apps', 'mcp-gateway', 'dist', 'main.js')], {
      env: { PATH: process.env.PATH ?? '', AUTH_MODE: 'none', HOST: '0.0.0.0', PORT: String(await freePort()) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('AUTH_MODE=none is only allowed when HOST is a loopback address');
  });

  test('AUTH_MODE=basic accepts the configured user only', async () => {
    const basic = await startStack({ AUTH_MODE: 'basic', BASIC_USERNAME: 'ops', BASIC_PASSWORD: 's3cret-basic' });
    try {
      const ok = await fetch(`${basic.baseUrl}/api/v1/auth/me`, {
        headers: { authorization: `Basic ${Buffer.from('ops:s3cret-basic').toString('base64')}` },
      });
      expect(await ok.json()).toMatchObject({ subject: 'ops', role: 'admin', credentialType: 'basic' });
      const bad = await fetch(`${basic.baseUrl}/api/v1/auth/me`, {
        headers: { authorization: `Basic ${Buffer.from('ops:nope').toString('base64')}` },
      });
      expect(bad.status).toBe(401);
      const client = await connectClient(basic.mcpUrl, {
        authorization: `Basic ${Buffer.from('ops:s3cret-basic').toString('base64')}`,
      });
      expect((await client.listTools()).tools).toHaveLength(3);
      await client.close();
    } finally {
      await basic.stop();
    }
  }, 60_000);
});
