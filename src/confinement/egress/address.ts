import { as16, type IP, parseCidr, parseIP, samePrefix, v4 } from '../../util/ip.js'

// The address floor: what a resolved address may be, whatever the lists say. Judged on the
// address's bytes (ip.ts), never on its text.
// - 'never': link-local (cloud metadata at 169.254.169.254), unspecified, multicast,
//   broadcast/reserved: refused always, even when an entry names them.
// - 'private': loopback, RFC 1918, CGNAT, ULA, and ranges that are not the public
//   internet (documentation/TEST-NET, benchmarking, IETF, NAT64, 6to4, Teredo, discard,
//   site-local): reachable only when the entry that allowed the connection is an IP
//   literal or CIDR naming the address, i.e. lying inside that special range: `::/0` or
//   `0.0.0.0/0` cover loopback but do not name it.
// - anything else is public.
// An IPv6 address that carries an IPv4 address (carriedIPv4) is never less refused than
// the address it carries.
type Floor = 'never' | 'private'
type Range = { bytes: Uint8Array; prefix: number; label: string; floor: Floor }

function range(net: string, prefix: number, label: string, floor: Floor): Range {
  const ip = parseIP(net) as IP
  return { bytes: as16(ip), prefix: ip.family === 4 ? prefix + 96 : prefix, label, floor }
}

const V4: Range[] = [
  range('0.0.0.0', 8, 'unspecified', 'never'),
  range('10.0.0.0', 8, 'private (RFC 1918)', 'private'),
  range('100.64.0.0', 10, 'CGNAT', 'private'),
  range('127.0.0.0', 8, 'loopback', 'private'),
  range('169.254.0.0', 16, 'link-local (cloud metadata)', 'never'),
  range('172.16.0.0', 12, 'private (RFC 1918)', 'private'),
  range('192.0.0.0', 24, 'IETF protocol', 'private'),
  range('192.0.2.0', 24, 'documentation (TEST-NET-1)', 'private'),
  range('192.168.0.0', 16, 'private (RFC 1918)', 'private'),
  range('198.18.0.0', 15, 'benchmarking', 'private'),
  range('198.51.100.0', 24, 'documentation (TEST-NET-2)', 'private'),
  range('203.0.113.0', 24, 'documentation (TEST-NET-3)', 'private'),
  range('224.0.0.0', 4, 'multicast', 'never'),
  range('240.0.0.0', 4, 'reserved', 'never'),
]
const V6: Range[] = [
  range('::', 128, 'unspecified', 'never'),
  range('::1', 128, 'loopback', 'private'),
  range('64:ff9b::', 96, 'NAT64', 'private'),
  // Local-use NAT64 (RFC 8215): the operator picks the prefix length, so what it carries
  // cannot be decoded; only an entry inside 64:ff9b:1::/48 reaches it.
  range('64:ff9b:1::', 48, 'local-use NAT64', 'private'),
  range('100::', 64, 'discard', 'private'),
  range('2001::', 32, 'Teredo', 'private'),
  range('2001:db8::', 32, 'documentation', 'private'),
  range('2002::', 16, '6to4', 'private'),
  range('fc00::', 7, 'ULA', 'private'),
  range('fe80::', 10, 'link-local', 'never'),
  range('fec0::', 10, 'site-local', 'private'),
  range('ff00::', 8, 'multicast', 'never'),
]

export type AddressClass = { floor: 'public' } | { floor: Floor; label: string }

// Ranges a test lab declares public (TEST-NET addresses of a namespace the test made).
// Set only through lab.ts, which nothing but the test suite imports.
let publicOverride: { bytes: Uint8Array; prefix: number }[] | undefined
export function setPublicRangesForLab(cidrs: string[] | undefined): void {
  publicOverride = cidrs?.length
    ? cidrs.map((c) => {
        const [net, prefix] = c.split('/')
        const ip = parseIP(net ?? '') as IP
        const bits = Number(prefix ?? (ip.family === 4 ? 32 : 128))
        return { bytes: as16(ip), prefix: ip.family === 4 ? bits + 96 : bits }
      })
    : undefined
}

const zeros = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0)

// The IPv4 address(es) an IPv6 address carries, with the form that carries them:
// mapped ::ffff:0:0/96 and translated ::ffff:0:0:0/96 (the kernel dials the IPv4 address
// for a mapped one), compatible ::/96 (but not :: and ::1), NAT64 64:ff9b::/96, 6to4
// 2002::/16 (bits 16-47), and Teredo 2001::/32 (its server in bits 32-63, its client
// obfuscated in the last 32 bits).
export function carriedIPv4(ip: IP): { form: string; address: IP }[] {
  const b = ip.bytes
  if (ip.family === 4) return []
  const tail = v4(b.subarray(12))
  if (zeros(b, 0, 10) && b[10] === 255 && b[11] === 255) return [{ form: 'IPv4-mapped', address: tail }]
  if (zeros(b, 0, 8) && b[8] === 255 && b[9] === 255 && zeros(b, 10, 12))
    return [{ form: 'IPv4-translated', address: tail }]
  if (zeros(b, 0, 12) && !(zeros(b, 12, 15) && (b[15] ?? 0) <= 1))
    return [{ form: 'IPv4-compatible', address: tail }]
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12))
    return [{ form: 'NAT64', address: tail }]
  if (b[0] === 0x20 && b[1] === 0x02) return [{ form: '6to4', address: v4(b.subarray(2, 6)) }]
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0)
    return [
      { form: 'Teredo server', address: v4(b.subarray(4, 8)) },
      { form: 'Teredo client', address: v4(Array.from(b.subarray(12)).map((x) => x ^ 0xff)) },
    ]
  return []
}

// The forms whose IPv4 address is the destination itself, not a gateway's input.
const SAME_DESTINATION = new Set(['IPv4-mapped', 'IPv4-translated', 'IPv4-compatible'])

// The IPv4 address an IPv6 spelling stands for (mapped, translated, compatible), else itself.
export function unmapped(ip: IP): IP {
  const [c] = carriedIPv4(ip)
  return c && SAME_DESTINATION.has(c.form) ? c.address : ip
}

// The special range an address lies in by its own bytes (not what it carries), if any.
function ownRange(ip: IP): Range | undefined {
  const b = as16(ip)
  const hit = (ip.family === 4 ? V4 : V6).find((r) => samePrefix(b, r.bytes, r.prefix))
  if (hit?.floor === 'private' && publicOverride?.some((r) => samePrefix(b, r.bytes, r.prefix)))
    return undefined
  return hit
}

function ownClass(ip: IP): AddressClass {
  const hit = ownRange(ip)
  return hit ? { floor: hit.floor, label: hit.label } : { floor: 'public' }
}

export function classifyAddress(address: string | IP): AddressClass {
  const ip = typeof address === 'string' ? parseIP(address) : address
  if (!ip) return { floor: 'never', label: 'not an IP address' }
  const carried = carriedIPv4(ip)
  const first = carried[0]
  if (first && SAME_DESTINATION.has(first.form)) {
    const inner = ownClass(first.address)
    return inner.floor === 'public' ? { floor: 'private', label: first.form } : inner
  }
  const own = ownClass(ip)
  // A gateway form (NAT64, 6to4, Teredo) is at least as refused as what it carries.
  for (const { form, address: inner } of carried) {
    const c = ownClass(inner)
    if (c.floor === 'never') return { floor: 'never', label: `${form} of ${c.label}` }
  }
  for (const { form, address: inner } of carried) {
    const c = ownClass(inner)
    if (c.floor === 'private' && own.floor === 'public')
      return { floor: 'private', label: `${form} of ${c.label}` }
  }
  return own
}

// The IPv4 addresses inside `ip` (or `ip` itself) that are private: an entry lets the
// connection through only when it names each of them as an IPv4 address or range.
export function privateIPv4(ip: IP): IP[] {
  const all = ip.family === 4 ? [ip] : carriedIPv4(ip).map((c) => c.address)
  return all.filter((a) => ownClass(a).floor === 'private')
}

// The reason an address is special, or undefined for an ordinary public address.
export function specialRange(address: string): string | undefined {
  const c = classifyAddress(address)
  return c.floor === 'public' ? undefined : c.label
}

export type AddressPattern = {
  // Whether the entry covers this address (an IPv4 entry covers its IPv6 spellings too).
  matches(ip: IP): boolean
  // Whether the entry names this address: it covers it and lies inside the special range
  // the address's own bytes are in (`::/0` covers ::1 but does not name it). True for an
  // address in no special range.
  names(ip: IP): boolean
  // Whether the entry names this IPv4 address as IPv4: an IPv4 literal or CIDR, or a range
  // inside ::ffff:0:0/96, lying inside the address's special range. `::/0`, `0.0.0.0/0` or
  // `::ffff:0:0/96` cover every IPv4 address but name no private one.
  namesIPv4(ip: IP): boolean
  // Whether a DENY entry refuses this address: it covers it, the IPv4 address an IPv6 spelling
  // stands for, or an IPv4 address it carries through a gateway form (NAT64, 6to4, Teredo).
  // Wider than `matches` on purpose: a deny entry must hold in every spelling that could reach
  // the machine it names.
  denies(ip: IP): boolean
}

// "10.0.0.0/8", "127.0.0.1", "::1" -> a matcher; undefined when the entry is a host pattern.
export function parseAddressPattern(entry: string): AddressPattern | undefined {
  const cidr = parseCidr(entry)
  if (!cidr) return undefined
  const { ip, prefix } = cidr
  const bytes = as16(ip)
  const bits = ip.family === 4 ? prefix + 96 : prefix
  const inV4Space = bits >= 96 && samePrefix(bytes, as16(v4([0, 0, 0, 0])), 96)
  const covers = (a: IP) => samePrefix(as16(a), bytes, bits)
  const names = (a: IP) => {
    const r = ownRange(a)
    return !r || (covers(a) && bits >= r.prefix && samePrefix(bytes, r.bytes, r.prefix))
  }
  return {
    matches: (a) => covers(a) || covers(unmapped(a)),
    names,
    namesIPv4: (a) => inV4Space && covers(a) && names(a),
    denies: (a) => covers(a) || covers(unmapped(a)) || carriedIPv4(a).some((c) => covers(c.address)),
  }
}
