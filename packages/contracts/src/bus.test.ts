import type { z } from 'zod';
import {
  BusReplySchema,
  BusRequestSchema,
  defineOps,
  PingReplySchema,
  PingRequestSchema,
  ReplyMessageSchema,
  TraceContextSchema,
  type OpDefinition,
} from './bus';
import { firstErrorPath } from '../test-fixtures/first-error-path';
import { dagOps, runOps, wikiOps } from './ops';

/** The path of the first issue, dotted (`''` for the whole value), or `null` when the value is valid. */
const principal = { id: 'user-1', subject: 'alice', role: 'admin', credentialType: 'api_key' };
const request = {
  op: 'dag.get',
  payload: { name: 'a' },
  principal,
  deadline: 1_900_000_000_000,
  traceContext: {},
  replyTo: 'dagu:reply:c1',
};

describe('bus contracts (docs/architecture.md "Request flow")', () => {
  const cases: Array<[string, z.ZodType, unknown, string | null]> = [
    ['request: full envelope', BusRequestSchema, request, null],
    ['request: no trace context (defaults to {})', BusRequestSchema, { ...request, traceContext: undefined }, null],
    ['request: any payload', BusRequestSchema, { ...request, payload: [1, 'x'] }, null],
    ['request: empty op', BusRequestSchema, { ...request, op: '' }, 'op'],
    ['request: fractional deadline', BusRequestSchema, { ...request, deadline: 1.5 }, 'deadline'],
    ['request: deadline 0', BusRequestSchema, { ...request, deadline: 0 }, 'deadline'],
    ['request: deadline as a string', BusRequestSchema, { ...request, deadline: '2030-01-01' }, 'deadline'],
    ['request: empty replyTo', BusRequestSchema, { ...request, replyTo: '' }, 'replyTo'],
    [
      'request: principal without role',
      BusRequestSchema,
      { ...request, principal: { ...principal, role: undefined } },
      'principal.role',
    ],
    [
      'request: principal with an unknown role',
      BusRequestSchema,
      { ...request, principal: { ...principal, role: 'root' } },
      'principal.role',
    ],
    ['request: with the gateway request id', BusRequestSchema, { ...request, requestId: 'req-1' }, null],
    ['request: empty request id', BusRequestSchema, { ...request, requestId: '' }, 'requestId'],
    [
      'request: request id over 128 characters',
      BusRequestSchema,
      { ...request, requestId: 'r'.repeat(129) },
      'requestId',
    ],
    [
      'request: traceparent not a string',
      BusRequestSchema,
      { ...request, traceContext: { traceparent: 1 } },
      'traceContext.traceparent',
    ],
    ['trace context: both headers', TraceContextSchema, { traceparent: '00-abc-def-01', tracestate: 'k=v' }, null],
    ['reply: ok with data', BusReplySchema, { ok: true, data: { name: 'a' } }, null],
    [
      'reply: failure with an error object',
      BusReplySchema,
      { ok: false, error: { code: 'resource_unavailable', message: 'm', details: { requestId: 'r' } } },
      null,
    ],
    [
      'reply: failure with an unknown code',
      BusReplySchema,
      { ok: false, error: { code: 'boom', message: 'm' } },
      'error.code',
    ],
    ['reply: failure without error', BusReplySchema, { ok: false }, 'error'],
    ['reply: ok not a boolean', BusReplySchema, { ok: 'yes', data: 1 }, 'ok'],
    ['reply message: id and reply', ReplyMessageSchema, { id: 'j1', reply: { ok: true, data: null } }, null],
    ['reply message: id not a string', ReplyMessageSchema, { id: 1, reply: { ok: true, data: null } }, 'id'],
    ['ping: empty request', PingRequestSchema, {}, null],
    ['ping: request with a key', PingRequestSchema, { x: 1 }, ''],
    ['ping: reply', PingReplySchema, { service: 'dag-service', replica: 'h-1', at: 't' }, null],
    ['ping: reply without replica', PingReplySchema, { service: 'dag-service', at: 't' }, 'replica'],
  ];

  test.each(cases)('%s', (_name, schema, value, path) => {
    expect(firstErrorPath(schema, value)).toBe(path);
  });

  test('defineOps keeps the catalog as given', () => {
    const catalog = { ping: { request: PingRequestSchema, reply: PingReplySchema, mutation: false } };
    expect(defineOps(catalog)).toBe(catalog);
  });

  const catalog: Record<string, OpDefinition> = { ...dagOps, ...runOps, ...wikiOps };
  test.each(Object.entries(catalog))(
    'op %s: a mutation never declares retries (CONTRIBUTING §6)',
    (_op, definition) => {
      if (definition.mutation) expect(definition.attempts ?? 1).toBe(1);
      expect(typeof definition.mutation).toBe('boolean');
    },
  );
});
