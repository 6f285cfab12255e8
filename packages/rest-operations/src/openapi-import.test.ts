import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DaguError } from '@dagu-mcp/contracts';
import { buildUpstreamRequest } from './build-request';
import { callUpstream } from './call-upstream';
import { InputValidators } from './input-validator';
import { importOpenApi } from './openapi-import';
import { resultOfResponse } from './tool-result';
import { AddressRanges, OutboundAllowList } from '@dagu-mcp/runtime';

const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'Billing', version: '1' },
  components: {
    schemas: {
      Money: { type: 'object', properties: { amount: { type: 'integer' }, currency: { type: 'string' } } },
      Refund: {
        allOf: [
          { $ref: '#/components/schemas/Money' },
          {
            type: 'object',
            properties: { reason: { type: 'string', enum: ['late', 'damaged'] } },
            required: ['reason'],
          },
        ],
      },
    },
    parameters: { Customer: { name: 'customer', in: 'path', required: true, schema: { type: 'string' } } },
  },
  paths: {
    '/customers/{customer}/refunds': {
      parameters: [{ $ref: '#/components/parameters/Customer' }],
      post: {
        operationId: 'createRefund',
        summary: 'Create a refund',
        parameters: [
          { name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } },
          { name: 'Authorization', in: 'header', schema: { type: 'string' } },
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Refund' } } },
        },
      },
      get: {
        operationId: 'list refunds!',
        parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', maximum: 100 } }],
      },
    },
    '/payments': {
      post: {
        operationId: 'pay',
        requestBody: {
          content: {
            'application/json': {
              schema: {
                oneOf: [
                  {
                    type: 'object',
                    properties: { card: { type: 'string' }, amount: { type: 'integer' } },
                    required: ['amount', 'card'],
                  },
                  {
                    type: 'object',
                    properties: { iban: { type: 'string' }, amount: { type: 'integer' } },
                    required: ['amount'],
                  },
                ],
              },
            },
          },
        },
      },
    },
    '/bulk': {
      post: {
        operationId: 'bulk',
        requestBody: { content: { 'application/json': { schema: { type: 'array', items: {} } } } },
      },
    },
    '/external': {
      get: { operationId: 'external', parameters: [{ $ref: 'https://example.com/params.json#/limit' }] },
    },
  },
};

test('drafts are pre-filled from operationId, $refs, allOf and a flattened oneOf; what cannot be flat is refused with the reason', async () => {
  const { drafts, refused } = await importOpenApi(DOCUMENT, 'billing');
  const byName = new Map(drafts.map((d) => [d.name, d]));
  expect([...byName.keys()].sort()).toEqual(['createRefund', 'list_refunds', 'pay']);

  const create = byName.get('createRefund');
  expect(create?.title).toBe('Create a refund');
  expect(create?.spec.arguments).toEqual({
    customer: { in: 'path' },
    'Idempotency-Key': { in: 'header' },
    amount: { in: 'body' },
    currency: { in: 'body' },
    reason: { in: 'body' },
  });
  expect(create?.spec.inputSchema.required).toEqual(['customer', 'reason']);
  expect(create?.notes.join(' ')).toContain('Authorization dropped');
  expect(create?.spec.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });

  const list = byName.get('list_refunds');
  expect(list?.spec.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });

  const pay = byName.get('pay');
  expect(Object.keys(pay?.spec.inputSchema.properties ?? {}).sort()).toEqual(['amount', 'card', 'iban']);
  expect(pay?.spec.inputSchema.required).toEqual(['amount']);
  expect(JSON.stringify(pay?.spec.inputSchema)).not.toMatch(/oneOf|anyOf|allOf/);

  expect(refused.map((r) => r.operation).sort()).toEqual(['bulk', 'external']);
  expect(refused.find((r) => r.operation === 'bulk')?.reason).toContain('not an object');
});

test('a document that is not OpenAPI 3 is refused', async () => {
  await expect(importOpenApi({ swagger: '2.0', paths: {} }, 'billing')).rejects.toThrow('not an OpenAPI 3 document');
});

test('an imported operation works as a tool against a real upstream; its schema refuses bad input on the field', async () => {
  let got: { url: string; headers: Record<string, unknown>; body: string } | undefined;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      got = { url: req.url ?? '', headers: req.headers, body };
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"refund":"re_1","status":"pending"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { drafts } = await importOpenApi(DOCUMENT, 'billing');
    const create = drafts.find((d) => d.name === 'createRefund');
    if (create === undefined) throw new Error('no draft');
    const validators = new InputValidators();
    const input = { customer: 'cus_9', reason: 'late', amount: 1250, 'Idempotency-Key': 'k-1' };
    validators.check(create.name, 'createRefund@1', create.spec.inputSchema, input);
    let bad: unknown;
    try {
      validators.check(create.name, 'createRefund@1', create.spec.inputSchema, { ...input, reason: 'bored' });
    } catch (err) {
      bad = err;
    }
    expect(bad).toBeInstanceOf(DaguError);
    expect(bad).toMatchObject({ code: 'invalid_tool_input', field: 'reason' });

    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const request = buildUpstreamRequest(create.name, create.spec, { name: 'billing', baseUrl }, input);
    const result = resultOfResponse(
      create.name,
      await callUpstream(request, {
        timeoutMs: 2000,
        maxBytes: 65536,
        retries: 0,
        allow: new OutboundAllowList(['127.0.0.1']),
        reachable: { ranges: AddressRanges.parse(['127.0.0.1/32']), setting: 'OUTBOUND_ALLOW_CIDRS' },
      }),
    );
    expect(result.structuredContent).toMatchObject({ status: 201, body: { refund: 're_1' } });
    expect(got?.url).toBe('/v1/customers/cus_9/refunds');
    expect(got?.headers['idempotency-key']).toBe('k-1');
    expect(JSON.parse(got?.body ?? '')).toEqual({ reason: 'late', amount: 1250 });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
