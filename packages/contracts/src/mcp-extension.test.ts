import type { z } from 'zod';
import { firstErrorPath } from '../test-fixtures/first-error-path';
import {
  callChannel,
  callQueueKey,
  catalogKey,
  ExtensionCallSchema,
  ExtensionCatalogSchema,
  ExtensionEventSchema,
  ExtensionNameSchema,
  ExtensionReplySchema,
  ExtensionSettingsSchema,
} from './mcp-extension';

/** The path of the first issue, dotted (`''` for the whole value), or `null` when the value is valid. */
const principal = { id: 'u1', subject: 'alice', role: 'admin', credentialType: 'none' };
const call = {
  callId: 'c1',
  method: 'tools/call',
  params: {},
  principal,
  sessionId: 's',
  clientCapabilities: {},
  replyTo: 'p:replica:1',
  deadline: 1,
};

describe('MCP extension wire protocol (docs/mcp-transport.md "Extensions")', () => {
  const cases: Array<[string, z.ZodType, unknown, string | null]> = [
    ['catalog: empty gets defaults', ExtensionCatalogSchema, {}, null],
    ['catalog: tool without a name', ExtensionCatalogSchema, { tools: [{}] }, 'tools.0.name'],
    [
      'catalog: template without uriTemplate',
      ExtensionCatalogSchema,
      { resourceTemplates: [{ name: 't' }] },
      'resourceTemplates.0.uriTemplate',
    ],
    ['catalog: empty uri prefix', ExtensionCatalogSchema, { uriPrefixes: [''] }, 'uriPrefixes.0'],
    ['call: tools/call', ExtensionCallSchema, call, null],
    ['call: unknown method', ExtensionCallSchema, { ...call, method: 'tools/list' }, 'method'],
    ['call: zero deadline', ExtensionCallSchema, { ...call, deadline: 0 }, 'deadline'],
    ['call: empty replyTo', ExtensionCallSchema, { ...call, replyTo: '' }, 'replyTo'],
    ['event: result', ExtensionEventSchema, { t: 'ext', callId: 'c1', type: 'result', result: {} }, null],
    ['event: close-stream', ExtensionEventSchema, { t: 'ext', callId: 'c1', type: 'close-stream' }, null],
    [
      'event: error without a code',
      ExtensionEventSchema,
      { t: 'ext', callId: 'c1', type: 'error', error: { message: 'x' } },
      'error.code',
    ],
    ['event: unknown type', ExtensionEventSchema, { t: 'ext', callId: 'c1', type: 'progress' }, 'type'],
    ['event: wrong routing tag', ExtensionEventSchema, { t: 'bus', callId: 'c1', type: 'close-stream' }, 't'],
    ['reply: cancel', ExtensionReplySchema, { type: 'cancel' }, null],
    ['reply: response with a result', ExtensionReplySchema, { type: 'response', key: 'k', result: {} }, null],
    ['reply: response without a key', ExtensionReplySchema, { type: 'response' }, 'key'],
  ];
  it.each(cases)('%s', (_name, schema, value, path) => {
    expect(firstErrorPath(schema, value)).toBe(path);
  });

  it('names keys and channels under the bus prefix', () => {
    expect(catalogKey('p', 'conf')).toBe('p:mcp:ext:conf:catalog');
    expect(callQueueKey('p', 'conf')).toBe('p:mcp:ext:conf:calls');
    expect(callChannel('p', 'c1')).toBe('p:mcp:ext:call:c1');
  });
});

describe('extension switches and names', () => {
  test.each([
    [{ enabled: true }, true],
    [{ enabled: false, allowedTools: ['hello', 'set_greeting'] }, true],
    [{ enabled: 'yes' }, false],
    [{}, false],
    [{ enabled: true, allowedTools: ['a.b'] }, false],
    [{ enabled: true, extra: 1 }, false],
  ])('ExtensionSettingsSchema %j → %s', (value, ok) => {
    expect(ExtensionSettingsSchema.safeParse(value).success).toBe(ok);
  });

  test.each([
    ['greeter', true],
    ['data-warehouse2', true],
    ['Greeter', false],
    ['2fast', false],
    ['a.b', false],
    ['x'.repeat(41), false],
  ])('ExtensionNameSchema %s → %s', (value, ok) => {
    expect(ExtensionNameSchema.safeParse(value).success).toBe(ok);
  });

  test('a tool may declare its minimum role; an unknown role fails the catalog at that path', () => {
    expect(ExtensionCatalogSchema.parse({ tools: [{ name: 't', minRole: 'operator' }] }).tools[0]?.minRole).toBe(
      'operator',
    );
    const bad = ExtensionCatalogSchema.safeParse({ tools: [{ name: 't', minRole: 'root' }] });
    expect(bad.success ? [] : bad.error.issues.map((i) => i.path.join('.'))).toEqual(['tools.0.minRole']);
  });
});
