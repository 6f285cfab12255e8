import { encodeJsonBody } from './json-body';
import { shareResult } from './shared-result';

/** The MCP endpoint's JSON bodies: one encoding, shared results spliced in. */
describe('encodeJsonBody', () => {
  it('is the JSON of any message or batch', () => {
    for (const body of [
      { jsonrpc: '2.0', id: 1, result: { ok: 'é✓' } },
      [{ jsonrpc: '2.0', id: 'a', error: { code: -32600, message: 'x' } }],
      { jsonrpc: '2.0', method: 'notifications/x' },
    ])
      expect(encodeJsonBody(body).toString('utf8')).toBe(JSON.stringify(body));
  });

  it('splices a shared result after the other members; the result is frozen and its JSON unchanged', () => {
    const result = shareResult({
      content: [{ type: 'text', text: 'ünïcode "quoted"\n' }],
      structuredContent: { n: 1 },
    });
    expect(Object.isFrozen(result.content[0])).toBe(true);
    for (const id of [0, 'req-"1"', null]) {
      const body = { jsonrpc: '2.0', id, result };
      const text = encodeJsonBody(body).toString('utf8');
      expect(JSON.parse(text)).toEqual(body);
    }
    expect(JSON.parse(encodeJsonBody({ result }).toString('utf8'))).toEqual({ result });
  });
});
