import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A parsed IP address (ipaddr.js), IPv4 or IPv6. */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** The NAT64 well-known prefix `64:ff9b::/96` (RFC 6052 §2.1): the last 32 bits are an IPv4 address. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * Parses an IP literal into the form the SSRF guard compares: an IPv4-mapped IPv6
 * address (`::ffff:127.0.0.1`, which WHATWG URL writes `::ffff:7f00:1`) and a NAT64
 * address under the well-known prefix (`64:ff9b::7f00:1`) become the IPv4 address a
 * socket connected to them reaches, so every rule and range sees one address whatever
 * the spelling (docs/decisions.md "Outbound calls reach internal addresses only where
 * the deployment allows it").
 *
 * Only the canonical forms Node accepts (`isIP`) are parsed: the guard sees addresses
 * from WHATWG URL parsing (which already turned `2130706433`, `0x7f000001` and `127.1`
 * into `127.0.0.1`) and from DNS, never an author's loose spelling.
 *
 * @param text an address, IPv6 with or without brackets
 * @returns the address, or `undefined` when `text` is not an IP address
 */
export function parseAddress(text: string): IpAddress | undefined {
  const bare = text.replace(/^\[|\]$/g, '');
  if (isIP(bare) === 0) return undefined;
  const address = ipaddr.process(bare);
  if (address.kind() === 'ipv6' && address.match(NAT64_WELL_KNOWN)) {
    const bytes = address.toByteArray().slice(12);
    return ipaddr.fromByteArray(bytes);
  }
  return address;
}

/**
 * Parses one CIDR range (`10.0.0.0/8`, `fd00:ec2::/32`); an IPv4-mapped IPv6 range
 * (`::ffff:10.0.0.0/104`) becomes its IPv4 range, as addresses do in {@link parseAddress}.
 *
 * @param single also accept a bare address, as a one-address range
 * @throws Error naming the entry when it is not a CIDR range (nor, with `single`, an address)
 */
function parseRange(entry: string, single: boolean): [IpAddress, number] {
  const slash = entry.indexOf('/');
  const base = slash < 0 ? entry : entry.slice(0, slash);
  const bitsText = slash < 0 ? '' : entry.slice(slash + 1);
  if (isIP(base) === 0 || (slash < 0 && !single) || (slash >= 0 && !/^\d{1,3}$/.test(bitsText)))
    throw new Error(`not a CIDR range: ${entry}`);
  const address = ipaddr.parse(base);
  const max = address.kind() === 'ipv4' ? 32 : 128;
  const bits = slash < 0 ? max : Number(bitsText);
  if (bits > max) throw new Error(`not a CIDR range: ${entry} (a prefix of at most ${max} bits)`);
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && bits >= 96)
    return [address.toIPv4Address(), bits - 96];
  return [address, bits];
}

/**
 * A set of CIDR ranges matched with ipaddr.js, IPv4-mapped addresses as their IPv4
 * form. Used for the deployment's `OUTBOUND_ALLOW_CIDRS` and for the address entries
 * of an {@link OutboundAllowList}.
 */
export class AddressRanges {
  private constructor(
    private readonly ranges: ReadonlyArray<readonly [IpAddress, number]>,
    /** The entries as given, trimmed (for messages and docs). */
    readonly entries: readonly string[],
  ) {}

  /** No range: contains nothing. */
  static readonly NONE = new AddressRanges([], []);

  /**
   * @param entries CIDR ranges (`127.0.0.1/32`, `10.0.0.0/8`, `fd00::/8`); empty strings are skipped
   * @param options.single also accept a bare address as a one-address range (default false)
   * @throws Error naming the first entry that is not a range
   */
  static parse(entries: readonly string[], options: { single?: boolean } = {}): AddressRanges {
    const kept = entries.map((e) => e.trim()).filter((e) => e !== '');
    return new AddressRanges(
      kept.map((e) => parseRange(e.toLowerCase(), options.single === true)),
      kept,
    );
  }

  /** True when no range is listed. */
  get isEmpty(): boolean {
    return this.ranges.length === 0;
  }

  /** Whether `address` (an IP literal, or one parsed by {@link parseAddress}) is in a range; a non-IP is not. */
  contains(address: string | IpAddress): boolean {
    const parsed = typeof address === 'string' ? parseAddress(address) : address;
    if (parsed === undefined) return false;
    return this.ranges.some(([net, bits]) => net.kind() === parsed.kind() && parsed.match(net, bits));
  }
}
