import { parseMcpServers } from './mcp-servers';
import { loadRunConfig } from './run-config';

describe('RUN_MCP_SERVERS (mcp.call, dagu-actions §1.9 as amended)', () => {
  it('reads name → url or {url, headers}', () => {
    expect(
      parseMcpServers(
        JSON.stringify({ a: 'http://a/mcp', b: { url: 'https://b/mcp', headers: { Authorization: 'Bearer ${T}' } } }),
      ),
    ).toEqual({
      a: { url: 'http://a/mcp', headers: {} },
      b: { url: 'https://b/mcp', headers: { Authorization: 'Bearer ${T}' } },
    });
    expect(parseMcpServers('')).toEqual({});
  });

  it.each([
    ['[]', 'must be a JSON object'],
    ['{"a": "ftp://x"}', 'url must be an http(s) URL'],
    ['{"a b": "http://x"}', 'server name "a b"'],
    ['{"a": {"url": "http://x", "headers": {"H": 1}}}', 'header H must be a string'],
  ])('%s is refused (%s)', (text, needle) => {
    expect(() => parseMcpServers(text)).toThrow(needle);
  });

  it('a bad RUN_MCP_SERVERS or OUTBOUND_ALLOW_CIDRS fails the start, naming the variable', () => {
    expect(() => loadRunConfig({ RUN_MCP_SERVERS: '{"a": 1}' })).toThrow('RUN_MCP_SERVERS');
    expect(() => loadRunConfig({ OUTBOUND_ALLOW_CIDRS: '10.0.0.0/33' })).toThrow('OUTBOUND_ALLOW_CIDRS');
    expect(loadRunConfig({ OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8, 10.0.0.0/8' }).outboundAllowCidrs).toEqual([
      '127.0.0.0/8',
      '10.0.0.0/8',
    ]);
  });
});
