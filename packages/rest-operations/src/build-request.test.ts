import { DaguError } from '@dagu-mcp/contracts';
import { buildUpstreamRequest } from './build-request';
import { OperationVersionSpecSchema, type Upstream } from './operation';

const spec = OperationVersionSpecSchema.parse({
  upstream: 'billing',
  method: 'POST',
  pathTemplate: '/customers/{customer}/refunds',
  arguments: {
    customer: { in: 'path' },
    dryRun: { in: 'query', name: 'dry_run' },
    tags: { in: 'query', name: 'tag' },
    requestId: { in: 'header', name: 'X-Request-Id' },
    amount: { in: 'body' },
    reason: { in: 'body' },
  },
  inputSchema: {
    type: 'object',
    properties: { customer: {}, dryRun: {}, tags: {}, requestId: {}, amount: {}, reason: {} },
    required: ['customer', 'amount'],
  },
});
const upstream: Upstream = {
  name: 'billing',
  baseUrl: 'https://billing.internal/api/v2?tenant=acme',
  credential: { type: 'bearer', token: 'upstream-secret' },
  defaultHeaders: { 'X-Client': 'dagu' },
};

function refusal(fn: () => unknown): DaguError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DaguError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

test('every argument location lands where the version says, under the base URL, with our credential', () => {
  const request = buildUpstreamRequest('create_refund', spec, upstream, {
    customer: 'cus 42/é'.replace('/', ''),
    dryRun: true,
    tags: ['a', 'b'],
    requestId: 'req-1',
    amount: 1250,
    reason: 'late',
  });
  expect(request.method).toBe('POST');
  expect(request.url.origin).toBe('https://billing.internal');
  expect(request.url.pathname).toBe('/api/v2/customers/cus%2042%C3%A9/refunds');
  expect([...request.url.searchParams]).toEqual([
    ['tenant', 'acme'],
    ['dry_run', 'true'],
    ['tag', 'a'],
    ['tag', 'b'],
  ]);
  expect(request.headers).toMatchObject({
    'x-request-id': 'req-1',
    'x-client': 'dagu',
    authorization: 'Bearer upstream-secret',
    'content-type': 'application/json',
  });
  expect(JSON.parse(request.body ?? '')).toEqual({ amount: 1250, reason: 'late' });
});

test.each(['../admin', '..', '.', 'a/b', 'a\\b', ''])('a path argument %p is refused on its field', (value) => {
  const error = refusal(() => buildUpstreamRequest('create_refund', spec, upstream, { customer: value, amount: 1 }));
  expect(error.code).toBe('invalid_tool_input');
  expect(error.field).toBe('customer');
  expect(error.details).toEqual({ operation: 'create_refund' });
});

test('header values with line breaks and object values in a query are refused; nothing of the upstream leaks', () => {
  const header = refusal(() =>
    buildUpstreamRequest('create_refund', spec, upstream, { customer: 'c', amount: 1, requestId: 'x\r\nHost: evil' }),
  );
  expect(header.field).toBe('requestId');
  const query = refusal(() =>
    buildUpstreamRequest('create_refund', spec, upstream, { customer: 'c', amount: 1, dryRun: { a: 1 } }),
  );
  expect(query.field).toBe('dryRun');
  expect(JSON.stringify([header, query, header.message, query.message])).not.toContain('upstream-secret');
  expect(`${header.message}${query.message}`).not.toContain('billing.internal');
});

test('a version may not route Host, Authorization or Cookie from input, nor retry a POST', () => {
  for (const name of ['Host', 'authorization', 'Cookie']) {
    const parsed = OperationVersionSpecSchema.safeParse({
      upstream: 'billing',
      method: 'GET',
      pathTemplate: '/x',
      arguments: { h: { in: 'header', name } },
      inputSchema: { type: 'object', properties: { h: {} } },
    });
    expect(parsed.success).toBe(false);
  }
  const retried = OperationVersionSpecSchema.safeParse({
    upstream: 'billing',
    method: 'POST',
    pathTemplate: '/x',
    inputSchema: { type: 'object', properties: {} },
    retries: 2,
  });
  expect(retried.success).toBe(false);
  const rootOneOf = OperationVersionSpecSchema.safeParse({
    upstream: 'billing',
    method: 'GET',
    pathTemplate: '/x',
    inputSchema: { type: 'object', properties: {}, oneOf: [{}] },
  });
  expect(rootOneOf.success).toBe(false);
  const placeholder = OperationVersionSpecSchema.safeParse({
    upstream: 'billing',
    method: 'GET',
    pathTemplate: '/x/{id}',
    inputSchema: { type: 'object', properties: {} },
  });
  expect(placeholder.success).toBe(false);
});

test('each credential type is applied by the upstream, never by input', () => {
  const get = OperationVersionSpecSchema.parse({
    upstream: 'billing',
    method: 'GET',
    pathTemplate: '/ping',
    inputSchema: { type: 'object', properties: {} },
  });
  const base = { name: 'billing', baseUrl: 'https://billing.internal' };
  const basic = buildUpstreamRequest(
    'ping',
    get,
    { ...base, credential: { type: 'basic', username: 'u', password: 'p' } },
    {},
  );
  expect(basic.headers.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
  const header = buildUpstreamRequest(
    'ping',
    get,
    { ...base, credential: { type: 'header', header: 'X-Api-Key', value: 'k' } },
    {},
  );
  expect(header.headers['x-api-key']).toBe('k');
  const query = buildUpstreamRequest(
    'ping',
    get,
    { ...base, credential: { type: 'query', param: 'key', value: 'q' } },
    {},
  );
  expect(query.url.searchParams.get('key')).toBe('q');
});
