import {
  allowsBatch,
  classifyMessage,
  errorResponse,
  idOf,
  isResponse,
  negotiateVersion,
  understandsPriming,
  versionFromHeader,
} from './protocol';
import { parseEventId } from './event-log';
import { ClientAwaits } from './client-awaits';

describe('MCP-Protocol-Version (Streamable HTTP §Protocol Version Header)', () => {
  test.each([
    [undefined, { version: '2025-03-26' }],
    ['2025-06-18', { version: '2025-06-18' }],
    [' 2025-11-25 ', { version: '2025-11-25' }],
    ['2025-03-26', { version: '2025-03-26' }],
  ])('%j → %j', (header, expected) => {
    expect(versionFromHeader(header)).toEqual(expected);
  });

  test.each(['2024-11-05', '2099-01-01', 'banana', '2025-6-18', ''])('%j is refused with a reason', (header) => {
    expect(versionFromHeader(header)).toEqual({ error: expect.stringMatching(/^Bad Request: /) });
  });

  test('initialize gets the client revision when supported, else the newest', () => {
    expect(negotiateVersion('2025-06-18')).toBe('2025-06-18');
    expect(negotiateVersion('2025-03-26')).toBe('2025-03-26');
    expect(negotiateVersion('2024-11-05')).toBe('2025-11-25');
    expect(negotiateVersion('nonsense')).toBe('2025-11-25');
  });

  test('batches only in 2025-03-26; priming from 2025-11-25', () => {
    expect([allowsBatch('2025-03-26'), allowsBatch('2025-06-18'), allowsBatch('2025-11-25')]).toEqual([
      true,
      false,
      false,
    ]);
    expect([
      understandsPriming('2025-03-26'),
      understandsPriming('2025-06-18'),
      understandsPriming('2025-11-25'),
    ]).toEqual([false, false, true]);
  });
});

describe('JSON-RPC message classification', () => {
  test.each([
    [{ jsonrpc: '2.0', id: 1, method: 'ping' }, 'request'],
    [{ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'x' } }, 'request'],
    [{ jsonrpc: '2.0', method: 'notifications/initialized' }, 'notification'],
    [{ jsonrpc: '2.0', id: 1, result: {} }, 'response'],
    [{ jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } }, 'response'],
    [{ jsonrpc: '1.0', id: 1, method: 'ping' }, 'invalid'],
    [{ id: 1, method: 'ping' }, 'invalid'],
    ['ping', 'invalid'],
    [null, 'invalid'],
  ])('%j is a %s', (value, kind) => {
    expect(classifyMessage(value).kind).toBe(kind);
  });

  test('the id of an invalid message is kept when readable', () => {
    expect(classifyMessage({ jsonrpc: '1.0', id: 5, method: 'x' })).toEqual({ kind: 'invalid', id: 5 });
    expect(idOf({ id: 1.5 })).toBeNull();
    expect(idOf([1])).toBeNull();
  });

  test('an error for an unreadable id carries "id": null; responses are told apart', () => {
    expect(errorResponse(null, -32700, 'Parse error')).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error' },
    });
    expect(errorResponse(3, -32602, 'bad', { field: 'x' })).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32602, message: 'bad', data: { field: 'x' } },
    });
    expect(isResponse({ jsonrpc: '2.0', id: 1, result: {} })).toBe(true);
    expect(isResponse({ jsonrpc: '2.0', method: 'notifications/message' })).toBe(false);
  });
});

describe('SSE event ids and server→client request ids', () => {
  test('event ids name their stream and Redis entry; anything else is not ours', () => {
    expect(parseEventId('s_1719000000000-0')).toEqual({ stream: 's', entryId: '1719000000000-0' });
    expect(parseEventId('r0123456789abcdef_17-3')).toEqual({ stream: 'r0123456789abcdef', entryId: '17-3' });
    for (const bad of ['', 's_', 'x_1-0', 's-1-0', 'r123_1-0', 's_1-0\nid: 2'])
      expect(parseEventId(bad)).toBeUndefined();
  });

  test('request ids carry the minting replica; only the session it was sent to may answer', async () => {
    const awaits = new ClientAwaits('0123456789ab');
    const id = awaits.mint();
    expect(ClientAwaits.ownerOf(id)).toBe('0123456789ab');
    expect(ClientAwaits.ownerOf(42)).toBeUndefined();
    const controller = new AbortController();
    const answer = awaits.wait('s1', id, 1_000, controller.signal);
    awaits.settle('s2', { id, result: { from: 'intruder' } });
    awaits.settle('s1', { id, result: { ok: true } });
    await expect(answer).resolves.toEqual({ ok: true });
    expect(awaits.size).toBe(0);
  });

  test('a wait ends with the client error, on timeout (-32001) or on abort, and never lingers', async () => {
    const awaits = new ClientAwaits('0123456789ab');
    const controller = new AbortController();
    const failing = awaits.wait('s', awaits.mint(), 1_000, controller.signal);
    awaits.settle('s', { id: 's-0123456789ab-1', error: { code: -1, message: 'declined' } });
    await expect(failing).rejects.toMatchObject({ code: -1, message: 'declined' });
    await expect(awaits.wait('s', awaits.mint(), 20, controller.signal)).rejects.toMatchObject({ code: -32001 });
    const aborted = awaits.wait('s', awaits.mint(), 1_000, controller.signal);
    controller.abort();
    await expect(aborted).rejects.toThrow('cancelled');
    expect(awaits.size).toBe(0);
  });
});
