import type { z } from 'zod';
import { AgentBindingSchema, bindingToolName } from './agent';
import { firstErrorPath } from '../test-fixtures/first-error-path';
import {
  OperationCreateRequestSchema,
  OperationImportRequestSchema,
  OperationToolRequestSchema,
  UpstreamPutRequestSchema,
} from './rest-operation';

/** The path of the first issue, dotted (`''` for the whole value), or `null` when the value is valid. */
describe('REST operation contracts', () => {
  const up = { workspace: 'billing', name: 'billing-api', baseUrl: 'https://api.example.com/v1' };
  const cases: Array<[string, z.ZodType, unknown, string | null]> = [
    ['upstream: minimal', UpstreamPutRequestSchema, up, null],
    ['upstream: ftp base URL', UpstreamPutRequestSchema, { ...up, baseUrl: 'ftp://x.example.com' }, 'baseUrl'],
    ['upstream: name with upper case', UpstreamPutRequestSchema, { ...up, name: 'Billing' }, 'name'],
    [
      'upstream: bearer credential',
      UpstreamPutRequestSchema,
      { ...up, credential: { type: 'bearer', token: 't' } },
      null,
    ],
    ['upstream: credential removed', UpstreamPutRequestSchema, { ...up, credential: null }, null],
    [
      'upstream: credential in the Cookie header',
      UpstreamPutRequestSchema,
      { ...up, credential: { type: 'header', header: 'Cookie', value: 'x' } },
      'credential.header',
    ],
    [
      'upstream: unknown credential type',
      UpstreamPutRequestSchema,
      { ...up, credential: { type: 'oauth', token: 't' } },
      'credential.type',
    ],
    [
      'upstream: default header with a line break',
      UpstreamPutRequestSchema,
      { ...up, defaultHeaders: { 'x-a': 'a\r\nb' } },
      'defaultHeaders.x-a',
    ],
    ['upstream: bad allow entry', UpstreamPutRequestSchema, { ...up, allowHosts: ['bad host'] }, 'allowHosts.0'],
    ['upstream: timeout over 60 s', UpstreamPutRequestSchema, { ...up, timeoutMs: 60_001 }, 'timeoutMs'],
    [
      'operation: name with a space',
      OperationCreateRequestSchema,
      { workspace: 'billing', name: 'get refund', spec: {} },
      'name',
    ],
    ['operation: spec missing', OperationCreateRequestSchema, { workspace: 'billing', name: 'get_refund' }, 'spec'],
    ['tool: latest', OperationToolRequestSchema, { workspace: 'billing', name: 'x', version: 'latest' }, null],
    ['tool: version 0', OperationToolRequestSchema, { workspace: 'billing', name: 'x', version: 0 }, 'version'],
    [
      'import: prefix too long',
      OperationImportRequestSchema,
      { workspace: 'billing', upstream: 'u', document: {}, prefix: 'p'.repeat(21) },
      'prefix',
    ],
  ];
  it.each(cases)('%s', (_name, schema, value, path) => {
    expect(firstErrorPath(schema, value)).toBe(path);
  });

  it('a rest_operation binding defaults to the latest published version and is named by its operation', () => {
    const binding = AgentBindingSchema.parse({ kind: 'rest_operation', operation: 'get_refund' });
    expect(binding).toMatchObject({ version: 'latest' });
    expect(bindingToolName(binding)).toBe('get_refund');
    expect(firstErrorPath(AgentBindingSchema, { kind: 'rest_operation', operation: 'x', version: 'draft' })).toBe(
      'version',
    );
  });
});
