import { ANONYMOUS_PRINCIPAL } from '@dagu-mcp/contracts';
import { createCallContext } from './call-context';
import { ClientAwaits } from './client-awaits';
import type { OutgoingMessage } from './protocol';
import type { SessionRecord } from './session-store';

const session = (over: Partial<SessionRecord> = {}): SessionRecord => ({
  id: 'a'.repeat(64),
  protocolVersion: '2025-11-25',
  principalId: 'anonymous',
  clientInfo: {},
  clientCapabilities: {},
  logLevel: undefined,
  createdAt: 0,
  ...over,
});

function context(over: Partial<SessionRecord> = {}, token: string | null = 'tok', failSend = false) {
  const progressToken = token ?? undefined;
  const sent: OutgoingMessage[] = [];
  const awaits = new ClientAwaits('0123456789ab');
  const controller = new AbortController();
  const ctx = createCallContext({
    session: session(over),
    principal: ANONYMOUS_PRINCIPAL,
    requestId: 1,
    progressToken,
    signal: controller.signal,
    outbound: {
      send: async (m) => {
        if (failSend) throw new Error('redis down');
        sent.push(m);
      },
    },
    awaits,
    clientRequestTimeoutMs: 1_000,
  });
  return { ctx, sent, awaits, controller };
}

test('progress needs this request token; other notifications pass', async () => {
  const { ctx, sent } = context();
  await ctx.notify({ method: 'notifications/progress', params: { progressToken: 'tok', progress: 1 } });
  await ctx.notify({ method: 'notifications/progress', params: { progressToken: 'other', progress: 2 } });
  await ctx.notify({ method: 'notifications/resources/updated', params: { uri: 'dagu://runs/a/b' } });
  expect(sent).toEqual([
    { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 1 } },
    { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'dagu://runs/a/b' } },
  ]);
  const without = context({}, null);
  await without.ctx.notify({ method: 'notifications/progress', params: { progressToken: 'tok', progress: 1 } });
  expect(without.sent).toEqual([]);
});

test('log messages below the session level are dropped; every level passes when none is set', async () => {
  const levels = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
  const filtered = context({ logLevel: 'warning' });
  const all = context();
  for (const level of levels) {
    await filtered.ctx.notify({ method: 'notifications/message', params: { level, data: level } });
    await all.ctx.notify({ method: 'notifications/message', params: { level, data: level } });
  }
  expect(filtered.sent.map((m) => ('params' in m ? m.params?.level : undefined))).toEqual([
    'warning',
    'error',
    'critical',
    'alert',
    'emergency',
  ]);
  expect(all.sent).toHaveLength(8);
});

test('a server→client request needs the client capability, carries a replica-owned id and resolves with the answer', async () => {
  const none = context();
  await expect(
    none.ctx.sendRequest?.({ method: 'elicitation/create', params: { message: 'x' } }),
  ).rejects.toMatchObject({ code: -32601 });
  expect(none.sent).toEqual([]);

  const able = context({ clientCapabilities: { elicitation: {} } });
  const pending = able.ctx.sendRequest?.({ method: 'elicitation/create', params: { message: 'x' } });
  await new Promise((r) => setImmediate(r));
  const request = able.sent[0];
  expect(request).toMatchObject({
    jsonrpc: '2.0',
    id: 's-0123456789ab-1',
    method: 'elicitation/create',
    params: { message: 'x' },
  });
  able.awaits.settle('a'.repeat(64), { id: 's-0123456789ab-1', result: { action: 'accept' } });
  await expect(pending).resolves.toEqual({ action: 'accept' });
});

test('a request that cannot be sent fails at once and leaves no wait behind', async () => {
  const broken = context({ clientCapabilities: { sampling: {} } }, 'tok', true);
  await expect(broken.ctx.sendRequest?.({ method: 'sampling/createMessage', params: {} })).rejects.toThrow(
    'redis down',
  );
  expect(broken.awaits.size).toBe(0);
});
