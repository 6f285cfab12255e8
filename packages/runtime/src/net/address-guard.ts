import { AddressRanges, parseAddress } from './address-ranges';

/**
 * ipaddr.js's names of the special-purpose ranges (its `range()`, from the IANA
 * special-purpose registries), in the words a refusal uses. Every range but
 * `unicast` is non-public; a name missing here is shown as ipaddr.js writes it.
 */
const RULE_WORDS: Readonly<Record<string, string>> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  uniqueLocal: 'unique-local',
  reserved: 'reserved',
  benchmarking: 'benchmarking',
  rfc6145: 'IPv4-translated',
  rfc6052: 'NAT64 local-use',
  '6to4': '6to4',
  teredo: 'Teredo',
  deprecatedSiteLocal: 'site-local',
  discard: 'discard-only',
};

/**
 * The rule that makes `address` non-public, in words (`loopback`, `link-local`,
 * `private`, `unique-local`, `unspecified`, `carrier-grade NAT`, `multicast`,
 * `reserved`, …), or `undefined` for a public unicast address (SSRF guard). IPv4-mapped IPv6 and NAT64 well-known-prefix addresses are
 * judged as the IPv4 address they reach (`::ffff:7f00:1` is loopback); an IPv4-compatible
 * address (`::7f00:1`, deprecated by RFC 4291) is non-public. Cloud metadata addresses
 * are covered: `169.254.169.254` is link-local, `fd00:ec2::254` unique-local.
 *
 * @returns `not an IP address` for anything that is not an IP literal (refuse rather than guess)
 */
export function nonPublicRule(address: string): string | undefined {
  const parsed = parseAddress(address);
  if (parsed === undefined) return 'not an IP address';
  const range = parsed.range();
  if (range !== 'unicast') return RULE_WORDS[range] ?? range;
  if (
    parsed.kind() === 'ipv6' &&
    parsed
      .toByteArray()
      .slice(0, 12)
      .every((b) => b === 0)
  )
    return 'IPv4-compatible';
  return undefined;
}

/** True when `address` (an IP literal) is not a public unicast address (see {@link nonPublicRule}). */
export function isNonPublicAddress(address: string): boolean {
  return nonPublicRule(address) !== undefined;
}

/**
 * The non-public addresses a kind of outbound call may reach, and the setting that
 * lists them, named in refusals: for calls made on an author's behalf the deployment's
 * `OUTBOUND_ALLOW_CIDRS` (docs/decisions.md "Outbound calls reach internal addresses
 * only where the deployment allows it").
 */
export interface ReachableRanges {
  readonly ranges: AddressRanges;
  /** The setting's name, e.g. `OUTBOUND_ALLOW_CIDRS`. */
  readonly setting: string;
}

/**
 * Why the guard refuses `address` as non-public, or `undefined` when it may be reached:
 * a public address, an address in `reachable` (matched in its IPv4 form when mapped),
 * or any address with `allowAll` (a test-only setting).
 *
 * @returns e.g. `169.254.169.254 is link-local and not in OUTBOUND_ALLOW_CIDRS`, or
 *   `::ffff:7f00:2 (127.0.0.2) is loopback and not in OUTBOUND_ALLOW_CIDRS`
 */
export function nonPublicRefusal(
  address: string,
  reachable: ReachableRanges | undefined,
  allowAll = false,
): { rule: string; message: string } | undefined {
  const rule = nonPublicRule(address);
  if (rule === undefined || allowAll) return undefined;
  const parsed = parseAddress(address);
  if (parsed !== undefined && reachable?.ranges.contains(parsed) === true) return undefined;
  const shown = parsed !== undefined && parsed.toString() !== address ? `${address} (${parsed.toString()})` : address;
  const where = reachable === undefined ? 'non-public addresses are not reached' : `not in ${reachable.setting}`;
  return {
    rule,
    message: reachable === undefined ? `${shown} is ${rule}: ${where}` : `${shown} is ${rule} and ${where}`,
  };
}

/**
 * An allow-list of outbound destinations: host names (`api.example.com`), subdomain
 * wildcards (`*.example.com`), IP addresses and CIDR ranges (`203.0.113.0/24`,
 * `2001:db8::/32`). An empty list allows every public host. The list only narrows
 * where calls go: it never opens a non-public address, whatever it names (that is the deployment's {@link ReachableRanges}).
 */
export class OutboundAllowList {
  private readonly hosts: string[] = [];
  private readonly suffixes: string[] = [];
  private readonly ranges: AddressRanges;

  /** @throws Error for an entry that is neither a host name, a `*.` wildcard, an IP address nor a CIDR range */
  constructor(entries: readonly string[]) {
    const addresses: string[] = [];
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (entry === '') continue;
      if (entry.includes('/') || parseAddress(entry) !== undefined) addresses.push(entry);
      else if (entry.startsWith('*.') && /^[a-z0-9.-]+$/.test(entry.slice(2))) this.suffixes.push(entry.slice(1));
      else if (/^[a-z0-9.-]+$/.test(entry)) this.hosts.push(entry);
      else throw new Error(`not a host name, wildcard or CIDR range: ${raw}`);
    }
    this.ranges = AddressRanges.parse(addresses, { single: true });
  }

  /** True when the list is empty (every public host allowed). */
  get isEmpty(): boolean {
    return this.hosts.length === 0 && this.suffixes.length === 0 && this.ranges.isEmpty;
  }

  /** Whether the URL's host name is on the list by name or wildcard (checked before DNS). */
  allowsHost(hostname: string): boolean {
    const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
    return this.hosts.includes(host) || this.suffixes.some((s) => host.endsWith(s));
  }

  /** Whether an address (an IP literal or a resolved address) is one the list names or a range covers. */
  allowsAddress(address: string): boolean {
    return this.ranges.contains(address);
  }
}
