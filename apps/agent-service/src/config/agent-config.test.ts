import { ConfigError } from '@dagu-mcp/runtime';
import { loadAgentConfig } from './agent-config';

// OUTBOUND_ALLOW_CIDRS: parsed once at start; a malformed range stops the start.
describe('loadAgentConfig: OUTBOUND_ALLOW_CIDRS', () => {
  it('is empty by default: no non-public address is reachable', () => {
    const ranges = loadAgentConfig({}).outboundAllowCidrs;
    expect(ranges?.isEmpty).toBe(true);
    expect(ranges?.contains('127.0.0.1')).toBe(false);
  });
  it('parses comma-separated IPv4 and IPv6 ranges', () => {
    const ranges = loadAgentConfig({
      OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32, 10.20.0.0/16,fd00:ec2::254/128',
    }).outboundAllowCidrs;
    expect(ranges?.entries).toEqual(['127.0.0.1/32', '10.20.0.0/16', 'fd00:ec2::254/128']);
    expect(['127.0.0.1', '::ffff:127.0.0.1', '10.20.3.4', 'fd00:ec2::254'].map((a) => ranges?.contains(a))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(ranges?.contains('127.0.0.2')).toBe(false);
  });
  it.each(['10.0.0.1', '10.0.0.0/33', 'internal.example/8'])('refuses %s, naming the variable', (value) => {
    expect(() => loadAgentConfig({ OUTBOUND_ALLOW_CIDRS: value })).toThrow(ConfigError);
    expect(() => loadAgentConfig({ OUTBOUND_ALLOW_CIDRS: value })).toThrow(/OUTBOUND_ALLOW_CIDRS: not a CIDR range/);
  });
});
