import { BlockList, isIP } from 'node:net';

/**
 * Addresses an outbound call to a user-supplied URL must not reach unless
 * configured (SSRF guard, issue 23 item 2; shared with the REST-operations
 * upstream calls): loopback, private (RFC 1918, unique-local), link-local
 * (incl. cloud metadata 169.254.169.254), carrier-grade NAT, unspecified,
 * multicast and reserved ranges, and IPv4-mapped IPv6 forms of them.
 */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv6');
}

/** True when `address` (an IP literal) is not a public unicast address. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return true; // not an IP: refuse rather than guess
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  if (mapped?.[1] !== undefined) return NON_PUBLIC.check(mapped[1], 'ipv4');
  if (lower.startsWith('::ffff:')) return true; // hex-written mapped IPv4: refuse
  return NON_PUBLIC.check(lower, 'ipv6');
}

/**
 * An allow-list of outbound destinations: host names (`api.example.com`),
 * subdomain wildcards (`*.example.com`) and CIDR ranges (`203.0.113.0/24`,
 * `2001:db8::/32`) and IP addresses. An empty list allows every public host.
 * A non-public address is reached only through an entry that names it (an IP
 * address or a range covering it), never through a host name.
 */
export class OutboundAllowList {
  private readonly hosts: string[] = [];
  private readonly suffixes: string[] = [];
  private readonly ranges = new BlockList();
  private readonly hasRanges: boolean;

  /** @throws Error for an entry that is neither a host name, a `*.` wildcard nor a CIDR */
  constructor(entries: readonly string[]) {
    let ranges = false;
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (entry === '') continue;
      const slash = entry.indexOf('/');
      if (slash > 0) {
        const net = entry.slice(0, slash);
        const prefix = Number(entry.slice(slash + 1));
        const family = isIP(net);
        if (family === 0 || !Number.isInteger(prefix)) throw new Error(`not a CIDR range: ${raw}`);
        this.ranges.addSubnet(net, prefix, family === 4 ? 'ipv4' : 'ipv6');
        ranges = true;
      } else if (entry.startsWith('*.')) this.suffixes.push(entry.slice(1));
      else if (isIP(entry) !== 0) {
        // An address named explicitly is a one-address range: it may be reached even when it is
        // loopback, private or link-local (issue 25 item 5: "unless the entry names them explicitly").
        this.hosts.push(entry);
        this.ranges.addAddress(entry, isIP(entry) === 4 ? 'ipv4' : 'ipv6');
        ranges = true;
      } else if (/^[a-z0-9.-]+$/.test(entry)) this.hosts.push(entry);
      else throw new Error(`not a host name, wildcard or CIDR range: ${raw}`);
    }
    this.hasRanges = ranges;
  }

  /** True when the list is empty (every public host allowed). */
  get isEmpty(): boolean {
    return this.hosts.length === 0 && this.suffixes.length === 0 && !this.hasRanges;
  }

  /** Whether the URL's host name is on the list by name (checked before DNS). */
  allowsHost(hostname: string): boolean {
    const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
    return this.hosts.includes(host) || this.suffixes.some((s) => host.endsWith(s));
  }

  /** Whether a resolved address falls in a listed CIDR range (checked after DNS). */
  allowsAddress(address: string): boolean {
    if (!this.hasRanges) return false;
    const family = isIP(address);
    return family !== 0 && this.ranges.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}
