import { ORPHANED_MESSAGE, orphanedAnswer } from './orphan-check';

describe('orphanedAnswer (dagu-model §10)', () => {
  it('answers a tool call with an isError result: resource_unavailable, outcome unknown, requestId and dagRunId', () => {
    const answer = orphanedAnswer({
      replica: 'r1',
      id: 7,
      method: 'tools/call',
      requestId: 'req-1',
      dagRunId: 'run-1',
    });
    expect(answer).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: {
        isError: true,
        content: [{ type: 'text', text: ORPHANED_MESSAGE }],
        structuredContent: {
          code: 'resource_unavailable',
          message: ORPHANED_MESSAGE,
          details: { outcome: 'unknown', requestId: 'req-1', dagRunId: 'run-1' },
        },
      },
    });
  });

  it('answers any other request with a JSON-RPC error -32005 carrying the same object, the id kept', () => {
    const answer = orphanedAnswer({ replica: 'r1', id: 'a', method: 'resources/read', requestId: 'req-2' });
    expect(answer).toEqual({
      jsonrpc: '2.0',
      id: 'a',
      error: {
        code: -32005,
        message: ORPHANED_MESSAGE,
        data: {
          code: 'resource_unavailable',
          message: ORPHANED_MESSAGE,
          details: { outcome: 'unknown', requestId: 'req-2' },
        },
      },
    });
  });
});
