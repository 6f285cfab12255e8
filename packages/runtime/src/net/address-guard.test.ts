import { isNonPublicAddress, nonPublicRefusal, nonPublicRule, OutboundAllowList } from './address-guard';
import { AddressRanges, parseAddress } from './address-ranges';

/** The host a URL's socket goes to, as WHATWG URL normalises it (what guardedFetch checks). */
const hostOf = (url: string): string => new URL(url).hostname.replace(/^\[|\]$/g, '');

// The SSRF guard's address rules (shared with the REST-operations upstream calls).
describe('isNonPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::',
    '::1',
    'fe80::1',
    'fd00::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::7f00:1',
    '::7f00:1',
    'localhost',
  ])('refuses %s', (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });
  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
    'allows %s',
    (address) => {
      expect(isNonPublicAddress(address)).toBe(false);
    },
  );
});

describe('every spelling of a non-public address is refused by name, unless OUTBOUND_ALLOW_CIDRS lists it', () => {
  const reachable = { ranges: AddressRanges.parse(['127.0.0.1/32']), setting: 'OUTBOUND_ALLOW_CIDRS' };
  it.each([
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254', 'link-local'],
    ['http://2852039166/', '169.254.169.254', 'link-local'],
    ['http://0xa9fea9fe/', '169.254.169.254', 'link-local'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe (169.254.169.254)', 'link-local'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254', 'unique-local'],
    ['http://[fe80::1]/', 'fe80::1', 'link-local'],
    ['http://10.0.0.1/', '10.0.0.1', 'private'],
    ['http://012.0.0.1/', '10.0.0.1', 'private'],
    ['http://172.16.5.4/', '172.16.5.4', 'private'],
    ['http://192.168.0.10/', '192.168.0.10', 'private'],
    ['http://[fc00::1]/', 'fc00::1', 'unique-local'],
    ['http://100.64.0.1/', '100.64.0.1', 'carrier-grade NAT'],
    ['http://0.0.0.0:28080/', '0.0.0.0', 'unspecified'],
    ['http://0:28080/', '0.0.0.0', 'unspecified'],
    ['http://[::]:28080/', '::', 'unspecified'],
    ['http://[::1]:28080/', '::1', 'loopback'],
    ['http://127.0.0.2:28080/', '127.0.0.2', 'loopback'],
    ['http://2130706434:28080/', '127.0.0.2', 'loopback'],
    ['http://0x7f000002:28080/', '127.0.0.2', 'loopback'],
    ['http://127.2:28080/', '127.0.0.2', 'loopback'],
    ['http://[::ffff:127.0.0.2]:28080/', '::ffff:7f00:2 (127.0.0.2)', 'loopback'],
    ['http://[64:ff9b::7f00:2]:28080/', '64:ff9b::7f00:2 (127.0.0.2)', 'loopback'],
    ['http://[::127.0.0.1]:28080/', '::7f00:1', 'IPv4-compatible'],
    ['http://224.0.0.1/', '224.0.0.1', 'multicast'],
    ['http://240.0.0.1/', '240.0.0.1', 'reserved'],
  ])('%s: %s is %s', (url, shown, rule) => {
    expect(nonPublicRefusal(hostOf(url), reachable)).toEqual({
      rule,
      message: `${shown} is ${rule} and not in OUTBOUND_ALLOW_CIDRS`,
    });
  });
  it.each([
    'http://127.0.0.1:28080/',
    'http://2130706433:28080/',
    'http://0x7f000001:28080/',
    'http://127.1:28080/',
    'http://0177.0.0.1:28080/',
    'http://[::ffff:127.0.0.1]:28080/',
    'http://[::ffff:7f00:1]:28080/',
    'http://[0:0:0:0:0:ffff:127.0.0.1]:28080/',
  ])('%s is 127.0.0.1, inside 127.0.0.1/32 (an IPv4-mapped address matches as its IPv4 form)', (url) => {
    expect(parseAddress(hostOf(url))?.toString()).toBe('127.0.0.1');
    expect(nonPublicRefusal(hostOf(url), reachable)).toBeUndefined();
  });
  it('names the rule without ranges, and allows everything only with the test switch', () => {
    expect(nonPublicRefusal('127.0.0.1', undefined)?.message).toBe(
      '127.0.0.1 is loopback: non-public addresses are not reached',
    );
    expect(nonPublicRefusal('127.0.0.1', undefined, true)).toBeUndefined();
    expect(nonPublicRefusal('8.8.8.8', undefined)).toBeUndefined();
    expect(nonPublicRule('not-an-ip')).toBe('not an IP address');
  });
});

describe('AddressRanges', () => {
  it('matches IPv4 and IPv6 ranges; a mapped range or address as its IPv4 form', () => {
    const ranges = AddressRanges.parse([' 10.20.0.0/16', 'fd00:ec2::254/128', '::ffff:192.168.0.0/112', '']);
    expect(ranges.entries).toEqual(['10.20.0.0/16', 'fd00:ec2::254/128', '::ffff:192.168.0.0/112']);
    expect(ranges.contains('10.20.9.9')).toBe(true);
    expect(ranges.contains('::ffff:10.20.9.9')).toBe(true);
    expect(ranges.contains('10.21.0.1')).toBe(false);
    expect(ranges.contains('fd00:ec2::254')).toBe(true);
    expect(ranges.contains('fd00:ec2::253')).toBe(false);
    expect(ranges.contains('192.168.4.4')).toBe(true);
    expect(ranges.contains('not-an-ip')).toBe(false);
    expect(AddressRanges.NONE.contains('127.0.0.1')).toBe(false);
  });
  it.each(['10.0.0.1', '10.0.0.0/33', '10.0.0/8', 'example.com/8', '::/129', '10.0.0.0/x'])(
    'refuses %s as a CIDR range',
    (entry) => {
      expect(() => AddressRanges.parse([entry])).toThrow(/not a CIDR range/);
    },
  );
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
  it('matches an IP address entry as that one address, in any spelling (it narrows; it opens nothing)', () => {
    const named = new OutboundAllowList(['127.0.0.1', 'internal.example']);
    expect(named.allowsAddress('127.0.0.1')).toBe(true);
    expect(named.allowsAddress('::ffff:7f00:1')).toBe(true);
    expect(named.allowsAddress('127.0.0.2')).toBe(false);
    expect(named.allowsHost('127.0.0.1')).toBe(false);
  });
  it('refuses a malformed entry', () => {
    expect(() => new OutboundAllowList(['bad host!'])).toThrow(/not a host/);
    expect(() => new OutboundAllowList(['10.0.0.0/40'])).toThrow(/not a CIDR range/);
  });
});
