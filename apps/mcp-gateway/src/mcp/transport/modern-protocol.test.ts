import {
  decodeHeaderValue,
  decorateResult,
  envelopeOf,
  headerMismatch,
  isModernVersion,
  metaVersionOf,
} from './modern-protocol';
import { withStructuredText } from './structured-text';
import { honouredFilter, ListenRegistry } from './listen-registry';

const headersOf =
  (h: Record<string, string>) =>
  (name: string): string | undefined =>
    h[name];

describe('modern-protocol (mcp-revisions §2)', () => {
  test('the stateless path is picked by the _meta version of a single message', () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
    expect(metaVersionOf({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } })).toBe('2026-07-28');
    expect(metaVersionOf({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBeUndefined();
    expect(metaVersionOf([{ params: { _meta: meta } }])).toBeUndefined();
    expect(isModernVersion('2026-07-28')).toBe(true);
    expect(isModernVersion('2025-11-25')).toBe(false);
  });

  test('headers: version, method and name must agree with the body; base64 values are decoded', () => {
    const ok = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'dagu_read' };
    const params = { name: 'dagu_read' };
    expect(headerMismatch(headersOf(ok), 'tools/call', params, '2026-07-28')).toBeUndefined();
    expect(headerMismatch(headersOf({ ...ok, 'mcp-name': 'x' }), 'tools/call', params, '2026-07-28')).toMatch(
      /Mcp-Name/,
    );
    expect(
      headerMismatch(headersOf({ ...ok, 'mcp-method': 'tools/list' }), 'tools/call', params, '2026-07-28'),
    ).toMatch(/Mcp-Method/);
    const { 'mcp-protocol-version': _v, ...noVersion } = ok;
    expect(headerMismatch(headersOf(noVersion), 'tools/call', params, '2026-07-28')).toMatch(/MCP-Protocol-Version/);
    // tools/list needs no Mcp-Name.
    expect(
      headerMismatch(headersOf({ ...ok, 'mcp-method': 'tools/list' }), 'tools/list', {}, '2026-07-28'),
    ).toBeUndefined();
    // The tasks extension's methods name the task (SEP-2663 routing headers).
    const task = { ...ok, 'mcp-method': 'tasks/get', 'mcp-name': 't-1' };
    expect(headerMismatch(headersOf(task), 'tasks/get', { taskId: 't-1' }, '2026-07-28')).toBeUndefined();
    expect(headerMismatch(headersOf(task), 'tasks/get', { taskId: 't-2' }, '2026-07-28')).toMatch(/Mcp-Name/);
    const name = 'Zürich-run';
    expect(decodeHeaderValue(`=?base64?${Buffer.from(name).toString('base64')}?=`)).toBe(name);
    expect(decodeHeaderValue(' plain ')).toBe('plain');
  });

  test('results get resultType and serverInfo; list and read results cache hints (kept when set)', () => {
    const info = { name: 'dagu-mcp', version: '1' };
    expect(decorateResult('tools/call', { content: [] }, info)).toEqual({
      content: [],
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': info },
    });
    expect(decorateResult('tools/list', { tools: [] }, info)).toMatchObject({ ttlMs: 60_000, cacheScope: 'private' });
    expect(decorateResult('resources/read', { contents: [], ttlMs: 5 }, info)).toMatchObject({
      ttlMs: 5,
      cacheScope: 'private',
    });
  });

  test('the envelope gives capabilities, client info and a valid log level only', () => {
    expect(
      envelopeOf(
        {
          'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
          'io.modelcontextprotocol/logLevel': 'loud',
        },
        '2026-07-28',
      ),
    ).toEqual({
      protocolVersion: '2026-07-28',
      clientCapabilities: { elicitation: {} },
      clientInfo: undefined,
      logLevel: undefined,
    });
  });
});

describe('structured text for 2025-03-26 clients', () => {
  test('adds the JSON once', () => {
    const result = { content: [{ type: 'text', text: 'summary' }], structuredContent: { a: 1 } };
    const once = withStructuredText(result);
    expect(once.content).toEqual([
      { type: 'text', text: 'summary' },
      { type: 'text', text: '{"a":1}' },
    ]);
    expect(withStructuredText(once)).toEqual(once);
    expect(withStructuredText({ content: [] })).toEqual({ content: [] });
  });
});

describe('listen registry', () => {
  test('honours run URIs only and tags notifications with the subscription id', () => {
    const filter = honouredFilter({
      resourceSubscriptions: ['dagu://runs/a/r1', 'dagu://runs/a/r1/logs', 'dagu://dags', 'nope'],
      toolsListChanged: true,
    });
    expect(filter).toEqual({ resourceSubscriptions: ['dagu://runs/a/r1', 'dagu://runs/a/r1/logs'] });
    const registry = new ListenRegistry();
    const sent: unknown[] = [];
    const remove = registry.add('listen:1', filter, (m) => sent.push(m));
    expect(registry.resourceUpdated('dagu://runs/a/r1')).toBe(1);
    expect(registry.resourceUpdated('dagu://runs/a/r2')).toBe(0);
    expect(sent).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri: 'dagu://runs/a/r1', _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen:1' } },
      },
    ]);
    remove();
    expect(registry.size).toBe(0);
  });

  test('honours toolsListChanged only once tool-list changes are fed, and sends them to the listeners that asked', () => {
    const registry = new ListenRegistry();
    expect(registry.filterFor({ toolsListChanged: true })).toEqual({});
    registry.feedToolListChanges();
    expect(registry.filterFor({ toolsListChanged: true, promptsListChanged: true })).toEqual({
      toolsListChanged: true,
    });
    const sent: unknown[] = [];
    registry.add('l1', registry.filterFor({ toolsListChanged: true }), (m) => sent.push(m));
    registry.add('l2', registry.filterFor({ resourceSubscriptions: ['dagu://runs/a/r1'] }), (m) => sent.push(m));
    expect(registry.toolsListChanged()).toBe(1);
    expect(sent).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'l1' } },
      },
    ]);
  });
});
