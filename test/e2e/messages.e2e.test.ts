/**
 * Issue 53 item 6, the messages a newcomer met, through the real stack over plain HTTP:
 * a missing required field says it is required and names it (not "Invalid option: expected
 * one of …"), and a positional param a DAG does not declare is named by its value (not
 * "Unknown param 1"). The upstream's JSON error body is covered in rest-operations.e2e.test.ts,
 * the quiet start and stop in two-stacks.e2e.test.ts and test/architecture/build-scripts.test.ts.
 */
import { restCall, type RestInit } from './rest-call';
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-53m' };
let stack: Stack;
let token = '';
const api = (path: string, init: RestInit = {}) => restCall(stack.baseUrl, path, { token, ...init });

beforeAll(async () => {
  stack = await startStack({ AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password });
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
  expect(login.status).toBe(200);
  token = String(login.body?.token);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

test('a missing required field says it is required, naming the field', async () => {
  const noRole = await api('/users', { method: 'POST', body: { username: 'newcomer', password: 'long-enough-1' } });
  expect(noRole.status).toBe(400);
  expect(noRole.body).toMatchObject({ code: 'invalid_request', message: 'role: required', field: 'role' });
  // A wrong value still says what is allowed.
  const badRole = await api('/users', {
    method: 'POST',
    body: { username: 'newcomer', password: 'long-enough-1', role: 'boss' },
  });
  expect(badRole.status).toBe(400);
  expect(String(badRole.body?.message)).toMatch(/^role: Invalid option: expected one of/);
});

test('a positional value for a DAG of named params is named by its value, with how to name it', async () => {
  const spec = 'params:\n  - name: ORDER\n    required: true\nsteps:\n  - name: s\n    run: echo "$ORDER"\n';
  expect((await api('/dags/refund-order', { method: 'PUT', body: { spec } })).status).toBe(201);
  const started = await api('/dags/refund-order/start', { method: 'POST', body: { params: 'ord-9' } });
  expect(started.status).toBe(400);
  expect(started.body?.field).toBe('params');
  expect(started.body?.message).toBe(
    'Unknown param: the positional value "ord-9" (param 1). This DAG declares only ORDER. Give values by name, e.g. ORDER=ord-9.',
  );
  const unknownName = await api('/dags/refund-order/start', { method: 'POST', body: { params: { ORDR: 'x' } } });
  expect(unknownName.status).toBe(400);
  expect(String(unknownName.body?.message)).toContain('Unknown param: ORDR.');
});
