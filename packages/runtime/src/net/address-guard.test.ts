import { isNonPublicAddress, OutboundAllowList } from './address-guard';

// The SSRF guard's address rules (issue 23 item 2; shared with the REST-operations upstream calls).
describe('isNonPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    'localhost',
  ])('refuses %s', (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });
  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111'])('allows %s', (address) => {
    expect(isNonPublicAddress(address)).toBe(false);
  });
});

describe('OutboundAllowList', () => {
  const list = new OutboundAllowList(['api.example.com', '*.corp.example', '203.0.113.0/24']);
  it('matches names, wildcards and resolved ranges', () => {
    expect(list.allowsHost('api.example.com')).toBe(true);
    expect(list.allowsHost('x.corp.example')).toBe(true);
    expect(list.allowsHost('example.com')).toBe(false);
    expect(list.allowsAddress('203.0.113.9')).toBe(true);
    expect(list.allowsAddress('198.51.100.1')).toBe(false);
    expect(new OutboundAllowList([]).isEmpty).toBe(true);
  });
  it('treats an IP address entry as naming that address (issue 25: non-public only when named)', () => {
    const named = new OutboundAllowList(['127.0.0.1', 'internal.example']);
    expect(named.allowsAddress('127.0.0.1')).toBe(true);
    expect(named.allowsAddress('127.0.0.2')).toBe(false);
    expect(named.allowsHost('127.0.0.1')).toBe(true);
  });
  it('refuses a malformed entry', () => {
    expect(() => new OutboundAllowList(['bad host!'])).toThrow(/not a host/);
  });
});
