/**
 * Bounds and browser rules of the REST API, as an attacker would try them
 * (issue 17; docs/security.md "Bounds and browser rules"), against the real
 * stack in AUTH_MODE=builtin plus one gateway replica in AUTH_MODE=none:
 *
 * - malformed input on REST is 400 `invalid_request` with `field`, never 500
 *   and never a tool code (dagu-model §10 error shape);
 * - a state-changing request from a foreign `Origin` is refused; with Basic
 *   or no authentication it must also carry a body type a form cannot send
 *   (or `X-CSRF-Token`); Bearer callers are unaffected;
 * - every answer is `nosniff` with a frame-nothing CSP; REST answers are
 *   `no-store`.
 */
import { freePort, startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const HELLO = 'steps:\n  - name: hello\n    run: echo hello\n';
const BASIC = `Basic ${Buffer.from(`${ADMIN.username}:${ADMIN.password}`).toString('base64')}`;
let stack: Stack;
let token: string;
let noAuthBase: string;
let stopNoAuth: () => void = () => undefined;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> | undefined;
}

async function send(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; base?: string } = {},
): Promise<Answer> {
  const res = await fetch(`${init.base ?? stack.baseUrl}/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: init.headers ?? {},
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const text = await res.text();
  let body: Record<string, unknown> | undefined;
  try {
    body = text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    body = { text };
  }
  return { status: res.status, headers: res.headers, body };
}

const bearer = (): Record<string, string> => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

beforeAll(async () => {
  stack = await startStack({ AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password });
  const login = await send('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  token = String(login.body?.token);
  expect(
    (await send('/dags/bounds-dag', { method: 'PUT', headers: bearer(), body: JSON.stringify({ spec: HELLO }) }))
      .status,
  ).toBe(201);
  const port = await freePort();
  const replica = await stack.spawnApp('mcp-gateway', { PORT: String(port), AUTH_MODE: 'none', HOST: '127.0.0.1' });
  stopNoAuth = () => replica.kill('SIGTERM');
  noAuthBase = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100 && (await fetch(`${noAuthBase}/healthz`).catch(() => undefined))?.status !== 200; i++)
    await new Promise((r) => setTimeout(r, 100));
}, 90_000);

afterAll(async () => {
  stopNoAuth();
  await stack?.stop();
});

describe('malformed input on REST is 400 invalid_request with field, never 500 (issue 17 item 3)', () => {
  test.each([
    ['a malformed percent-escape in a DAG name', 'GET', '/dags/%ZZ', 'path'],
    ['a truncated UTF-8 escape in a wiki path', 'GET', '/wiki/team/pages/a%E0%A4%A', 'path'],
    ['a malformed escape on a mutation', 'DELETE', '/dags/%ZZ', 'path'],
    ['a user id that is not a UUID', 'GET', '/users/not-a-uuid', 'id'],
    ['a user id that is not a UUID, on delete', 'DELETE', '/users/not-a-uuid', 'id'],
    ['an API-key id that is not a UUID', 'DELETE', '/api-keys/not-a-uuid', 'id'],
  ])('%s', async (_name, method, path, field) => {
    const answer = await send(path, { method, headers: bearer() });
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 400,
      body: expect.objectContaining({ code: 'invalid_request', field }) as unknown,
    });
  });

  test('a user update with an id that is not a UUID is 400, not a database error', async () => {
    const answer = await send('/users/not-a-uuid', {
      method: 'PATCH',
      headers: bearer(),
      body: JSON.stringify({ role: 'viewer' }),
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_request', field: 'id' });
  });

  test('a service input fault reads as invalid_request on REST, never a tool code', async () => {
    const answer = await send('/dags/bounds-dag/start', {
      method: 'POST',
      headers: bearer(),
      body: JSON.stringify({ dagRunId: 'bad id!' }),
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_request', field: 'dagRunId' });
  });

  test('a JSON body that is not an object names the body', async () => {
    const answer = await send('/dags/bounds-dag/validate', { method: 'POST', headers: bearer(), body: '[]' });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_request', field: 'body' });
  });
});

describe('browser rules on REST (issue 17 item 4)', () => {
  const validate = JSON.stringify({ spec: HELLO });

  test('a state-changing request from a foreign Origin is refused, whatever its credential', async () => {
    for (const origin of ['https://evil.example', 'null']) {
      const answer = await send('/dags/bounds-dag/validate', {
        method: 'POST',
        headers: { ...bearer(), origin },
        body: validate,
      });
      expect({ origin, status: answer.status, body: answer.body }).toEqual({
        origin,
        status: 403,
        body: expect.objectContaining({ code: 'unauthorized', field: 'origin' }) as unknown,
      });
    }
    const own = await send('/dags/bounds-dag/validate', {
      method: 'POST',
      headers: { ...bearer(), origin: stack.baseUrl },
      body: validate,
    });
    expect(own.status).toBe(200);
    const read = await send('/dags/bounds-dag', { headers: { ...bearer(), origin: 'https://evil.example' } });
    expect(read.status).toBe(200);
  });

  test.each([
    ['text/plain', 'text/plain'],
    ['form', 'application/x-www-form-urlencoded'],
    ['multipart form', 'multipart/form-data; boundary=x'],
  ])('with Basic, a %s body cannot act', async (_name, type) => {
    const answer = await send('/dags/bounds-dag/validate', {
      method: 'POST',
      headers: { authorization: BASIC, 'content-type': type },
      body: validate,
    });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ code: 'unauthorized', field: 'content-type' });
  });

  test('with Basic, a bodiless POST or DELETE needs a non-form type or X-CSRF-Token', async () => {
    const bare = await send('/dags/bounds-dag/suspend', { method: 'POST', headers: { authorization: BASIC } });
    expect(bare.status).toBe(403);
    expect(bare.body).toMatchObject({ field: 'content-type' });
    const typed = await send('/dags/bounds-dag/suspend', {
      method: 'POST',
      headers: { authorization: BASIC, 'content-type': 'application/json' },
    });
    expect(typed.status).toBe(200);
    const withHeader = await send('/dags/bounds-dag/resume', {
      method: 'POST',
      headers: { authorization: BASIC, 'x-csrf-token': '1' },
    });
    expect(withHeader.status).toBe(200);
    expect((await send('/dags/no-such-dag', { method: 'DELETE', headers: { authorization: BASIC } })).status).toBe(403);
  });

  test('Bearer callers are unaffected, and the wiki page PUT keeps its text/plain body', async () => {
    const plain = await send('/dags/bounds-dag/suspend', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
    });
    expect(plain.status).toBe(200);
    const page = await send('/wiki/team/pages/bounds', {
      method: 'PUT',
      headers: { authorization: BASIC, 'content-type': 'text/plain' },
      body: '# Bounds\n',
    });
    expect(page.status).toBe(201);
  });

  test('with AUTH_MODE=none on loopback, a cross-site simple request cannot start a run', async () => {
    const simple = await send('/dags/bounds-dag/start', {
      method: 'POST',
      base: noAuthBase,
      headers: { 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(simple.status).toBe(403);
    expect(simple.body).toMatchObject({ code: 'unauthorized', field: 'content-type' });
    const foreign = await send('/dags/bounds-dag/start', {
      method: 'POST',
      base: noAuthBase,
      headers: { 'content-type': 'application/json', origin: 'http://attacker.example' },
      body: '{}',
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ field: 'origin' });
    const json = await send('/dags/bounds-dag/validate', {
      method: 'POST',
      base: noAuthBase,
      headers: { 'content-type': 'application/json' },
      body: validate,
    });
    expect(json.status).toBe(200);
  });

  test('every answer is nosniff with a frame-nothing CSP; REST answers, the login token first, are no-store', async () => {
    const login = await send('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    expect(login.status).toBe(200);
    expect(login.headers.get('cache-control')).toBe('no-store');
    for (const answer of [login, await send('/dags/%ZZ'), await send('/no-such-route')]) {
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
    const health = await fetch(`${stack.baseUrl}/healthz`);
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
