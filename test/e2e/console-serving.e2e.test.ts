/**
 * The web console's plumbing end to end (issue 26), without a browser: the gateway serves the
 * built console (`WEB_DIST_DIR`, default the checkout's apps/web/dist) at `/` and under
 * `BASE_PATH` with its own Content-Security-Policy; the single-page app's fallback never
 * answers `/api`, `/mcp`, `/oauth` or `/.well-known` (their 404s stay JSON); `GET /` with
 * `Accept: application/json` is the JSON index; `GET /api/v1/events` streams run events across
 * gateway replicas; `POST /dags/{name}/validate` replies `errorLocations`.
 */
import { startStack, type Stack } from './stack';
import { restCall } from './rest-call';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const HTML = { accept: 'text/html,application/xhtml+xml' };
let stack: Stack;
let token: string;

beforeAll(async () => {
  stack = await startStack(
    { AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password, BASE_PATH: '/dagu' },
    { gatewayReplicas: 2 },
  );
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
  token = String(login.body?.token);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe('serving the console', () => {
  test.each(['/', '/dagu/', '/dags/demo', '/dagu/runs/demo/x'])(
    'a browser asking for %s gets the console page with its own CSP',
    async (path) => {
      const res = await fetch(`${stack.baseUrl}${path}`, { headers: HTML });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      const html = await res.text();
      expect(html).toContain('<meta name="dagu-base" content="/dagu">');
      const script = /<script[^>]+src="([^"]+)"/.exec(html)?.[1] ?? '';
      expect(script).toMatch(/^\/dagu\/console\/.+\.js$/);
      const asset = await fetch(`${stack.baseUrl}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/javascript/);
      expect(asset.headers.get('cache-control')).toContain('immutable');
    },
  );

  test('Accept: application/json on / is the JSON index', async () => {
    const res = await fetch(`${stack.baseUrl}/dagu/`, { headers: { accept: 'application/json' } });
    expect(await res.json()).toMatchObject({
      name: 'dagu-mcp',
      mcp: '/dagu/mcp',
      openApi: '/dagu/api/v1/openapi.json',
    });
  });

  test.each([
    '/api/nope',
    '/dagu/api/v1/nope',
    '/mcp/x',
    '/oauth/authorize-x',
    '/.well-known/nope',
    '/dagu/.well-known/x',
  ])('the fallback never answers %s: its 404 stays JSON', async (path) => {
    const res = await fetch(`${stack.baseUrl}${path}`, { headers: HTML });
    expect(res.status).not.toBe(200);
    expect(res.headers.get('content-type')).toMatch(/json/);
  });

  test('a script (no text/html in Accept) gets the JSON 404 on an unknown path', async () => {
    const res = await fetch(`${stack.baseUrl}/no-such-page`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'resource_not_found' });
  });
});

describe('GET /api/v1/events', () => {
  test('needs a credential', async () => {
    expect((await fetch(`${stack.baseUrl}/api/v1/events`)).status).toBe(401);
  });

  test("streams a run's status changes to a stream on the other replica, filtered by DAG", async () => {
    const [first, second] = stack.gateways;
    if (first === undefined || second === undefined) throw new Error('two gateway replicas expected');
    const put = await restCall(first.url, '/dags/live-demo', {
      method: 'PUT',
      token,
      body: { spec: 'steps:\n  - name: a\n    command: echo a\n' },
    });
    expect(put.status).toBe(201);
    const abort = new AbortController();
    const res = await fetch(`${second.url}/api/v1/events?name=live-demo`, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body?.getReader();
    if (reader === undefined) throw new Error('no body');
    let text = '';
    const decoder = new TextDecoder();
    const readUntil = async (predicate: (t: string) => boolean): Promise<void> => {
      const until = Date.now() + 20_000;
      while (!predicate(text) && Date.now() < until) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    };
    await readUntil((t) => t.includes(': connected'));
    const started = await restCall(first.url, '/dags/live-demo/start', { method: 'POST', token, body: {} });
    expect(started.status).toBe(201);
    await readUntil((t) => t.includes('"statusLabel":"succeeded"'));
    abort.abort();
    const events = text
      .split('\n\n')
      .filter((block) => block.startsWith('event: run'))
      .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as { name: string; statusLabel: string });
    expect(events.every((e) => e.name === 'live-demo')).toBe(true);
    expect(events.map((e) => e.statusLabel)).toEqual(expect.arrayContaining(['running', 'succeeded']));
  }, 40_000);
});

describe('validation errorLocations (the editor marks errors at their line)', () => {
  test('each error that names a place has its line and column', async () => {
    const spec = 'description: demo\nsteps:\n  - name: a\n    command: echo a\n  - name: b\n    comand: echo b\n';
    const reply = await restCall(stack.baseUrl, '/dags/loc-demo/validate', { method: 'POST', token, body: { spec } });
    expect(reply.body).toMatchObject({ valid: false });
    const errors = reply.body?.errors as string[];
    const locations = reply.body?.errorLocations as Array<{ index: number; line: number; column: number }>;
    const unknownField = errors.findIndex((e) => e.includes("'comand'"));
    expect(locations).toContainEqual({ index: unknownField, line: 6, column: 5 });
  });
});
