/**
 * The REST API `/api/v1` end to end (issue: "Authentication, API-key
 * surfaces, roles, audit, and the REST API surface"): DAG routes over the bus,
 * role checks (dagu-model §9: HTTP 403), and the OpenAPI 3.1 document checked
 * against the live routes.
 */
import { accessOf, type RouteAction } from '../../apps/mcp-gateway/src/actions/route-roles';
import { startStack, type Stack } from './stack';
import { restCall, type RestInit, type RestReply } from './rest-call';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const HELLO = 'steps:\n  - name: hello\n    run: echo hello\n';
let stack: Stack;
let admin: string;

const api = (path: string, init: RestInit = {}): Promise<RestReply> => restCall(stack.baseUrl, path, init);

beforeAll(async () => {
  stack = await startStack({ AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password });
  admin = String((await api('/auth/login', { method: 'POST', body: ADMIN })).body?.token);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('DAG routes', () => {
  test('put creates (201) then updates (200); get, spec, list, validate read it back', async () => {
    expect((await api('/dags/rest-dag', { method: 'PUT', token: admin, body: { spec: HELLO } })).status).toBe(201);
    const updated = await api('/dags/rest-dag', {
      method: 'PUT',
      token: admin,
      body: { spec: `description: v2\n${HELLO}` },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ applied: true, updated: true, version: 2 });
    expect((await api('/dags/rest-dag', { token: admin })).body).toMatchObject({ name: 'rest-dag', description: 'v2' });
    expect((await api('/dags/rest-dag/spec', { token: admin })).body).toMatchObject({
      spec: `description: v2\n${HELLO}`,
    });
    const list = await api('/dags?name=rest&perPage=5', { token: admin });
    expect((list.body?.items as Array<{ name: string }>).map((i) => i.name)).toEqual(['rest-dag']);
    const check = await api('/dags/rest-dag/validate', { method: 'POST', token: admin, body: { spec: 'steps: [' } });
    expect(check.body).toMatchObject({ valid: false });
  });

  test('an invalid put is 400 with the validation errors and writes nothing', async () => {
    const bad = await api('/dags/rest-bad', { method: 'PUT', token: admin, body: { spec: 'steps:\n  - name: a\n' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      code: 'invalid_request',
      details: { errors: [expect.stringContaining('step command is required')] },
    });
    expect((await api('/dags/rest-bad', { token: admin })).status).toBe(404);
  });

  test('suspend, resume and delete', async () => {
    await api('/dags/rest-tmp', { method: 'PUT', token: admin, body: { spec: HELLO } });
    expect((await api('/dags/rest-tmp/suspend', { method: 'POST', token: admin })).body).toMatchObject({
      suspended: true,
    });
    expect((await api('/dags/rest-tmp/resume', { method: 'POST', token: admin })).body).toMatchObject({
      suspended: false,
    });
    expect((await api('/dags/rest-tmp', { method: 'DELETE', token: admin })).status).toBe(204);
    expect((await api('/dags/rest-tmp', { token: admin })).status).toBe(404);
  });

  test('a viewer reads but cannot write (403 unauthorized)', async () => {
    const created = await api('/users', {
      method: 'POST',
      token: admin,
      body: { username: 'vera', password: 'viewer-pass-1', role: 'viewer' },
    });
    expect(created.status).toBe(201);
    const vera = String(
      (await api('/auth/login', { method: 'POST', body: { username: 'vera', password: 'viewer-pass-1' } })).body?.token,
    );
    expect((await api('/dags', { token: vera })).status).toBe(200);
    const put = await api('/dags/vera-dag', { method: 'PUT', token: vera, body: { spec: HELLO } });
    expect(put.status).toBe(403);
    expect(put.body).toMatchObject({ code: 'unauthorized' });
  });
});

describe('OpenAPI document', () => {
  test('is OpenAPI 3.1 and every documented operation is a live route with its declared access', async () => {
    const res = await fetch(`${stack.baseUrl}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      paths: Record<
        string,
        Record<string, { 'x-dagu-role': string; 'x-dagu-action': string; responses: Record<string, unknown> }>
      >;
    };
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThan(15);
    for (const { path, method, op } of operations) {
      const concrete = path.replace(/\{[^}]+\}/g, 'probe-x');
      const anonymous = await fetch(`${stack.baseUrl}${concrete}`, {
        method: method.toUpperCase(),
        headers: { 'content-type': 'application/json' },
        body: method === 'get' ? undefined : '{}',
      });
      const body = (await anonymous.text()) || '{}';
      // A live route never answers with the router's catch-all "No route for …".
      expect(`${method} ${path}: ${body}`).not.toContain('No route for');
      if (op['x-dagu-role'] !== 'public')
        expect(`${method} ${path} → ${anonymous.status}`).toBe(`${method} ${path} → 401`);
      // Issue 40: every route names the op (or gateway-local action) it serves, and its role is that one's.
      expect(`${method} ${path} → ${op['x-dagu-role']}`).toBe(
        `${method} ${path} → ${accessOf(op['x-dagu-action'] as RouteAction)}`,
      );
      expect(Object.keys(op.responses).length).toBeGreaterThan(0);
    }
  });
});

describe('DAG-run routes', () => {
  test('start a stored DAG, read the run, its logs and a step log, then retry; 036 validation answers 400 with the field', async () => {
    await api('/dags/rest-run', {
      method: 'PUT',
      token: admin,
      body: { spec: 'steps:\n  - name: say\n    run: echo from-rest\n' },
    });
    const started = await api('/dags/rest-run/start', { method: 'POST', token: admin, body: { params: 'A=1' } });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({
      dagName: 'rest-run',
      runUri: expect.stringMatching(/^dagu:\/\/runs\/rest-run\//),
    });
    const id = String(started.body?.dagRunId);
    let run = await api(`/dag-runs/rest-run/${id}`, { token: admin });
    for (let i = 0; i < 100 && ![2, 3, 4, 6].includes(Number(run.body?.status)); i++) {
      await new Promise((r) => setTimeout(r, 100));
      run = await api(`/dag-runs/rest-run/${id}`, { token: admin });
    }
    expect(run.body).toMatchObject({ name: 'rest-run', dagRunId: id, status: 4, statusLabel: 'succeeded' });
    const step = await api(`/dag-runs/rest-run/${id}/steps/say/log?tail=5`, { token: admin });
    expect(step.body?.stdoutContent).toContain('from-rest');
    const logs = await api(`/dag-runs/rest-run/${id}/logs`, { token: admin });
    expect(logs.body).toMatchObject({
      schedulerLog: expect.any(Object),
      stepLogs: [expect.objectContaining({ stepName: 'say' })],
    });
    const list = await api('/dag-runs?name=rest-run&status=4', { token: admin });
    expect((list.body?.items as Array<{ dagRunId: string }>).map((r) => r.dagRunId)).toContain(id);
    const retried = await api(`/dag-runs/rest-run/${id}/retry`, {
      method: 'POST',
      token: admin,
      body: { stepName: 'say' },
    });
    expect(retried.status).toBe(200);
    const bad = await api('/dags/rest-run/start', { method: 'POST', token: admin, body: { dagRunId: 'bad id!' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_request', field: 'dagRunId' });
    const badQuery = await api('/dag-runs?limit=0', { token: admin });
    expect(badQuery.status).toBe(400);
  });
});
