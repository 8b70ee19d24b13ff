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

// The IPv6 forms that carry an IPv4 address: the form's range (`net`/`bits`), the byte where the
// 32 bits of the IPv4 address sit, and the mask they are XORed with (Teredo obfuscates its
// client). Mapped ::ffff:0:0/96 and translated ::ffff:0:0:0/96 (the kernel dials the IPv4
// address for a mapped one), compatible ::/96 (but not :: and ::1), NAT64 64:ff9b::/96, 6to4
// 2002::/16 (bits 16-47), and Teredo 2001::/32 (its server in bits 32-63, its client obfuscated
// in the last 32 bits). The one definition of "the IPv4 address this IPv6 spelling stands for":
// carriedIPv4 reads it off a dialled address, and a deny entry spelled in a form is read with it
// too (AddressPattern.denies), so both sides agree on which spellings name the same machine.
type Form = { form: string; net: Uint8Array; bits: number; at: number; xor: number }
function form(name: string, net: string, bits: number, at: number, xor = 0): Form {
  return { form: name, net: as16(parseIP(net) as IP), bits, at, xor }
}
const FORMS: Form[] = [
  form('IPv4-mapped', '::ffff:0:0', 96, 12),
  form('IPv4-translated', '::ffff:0:0:0', 96, 12),
  form('IPv4-compatible', '::', 96, 12),
  form('NAT64', '64:ff9b::', 96, 12),
  form('6to4', '2002::', 16, 2),
  form('Teredo server', '2001::', 32, 4),
  form('Teredo client', '2001::', 32, 12, 0xff),
]
// :: and ::1 are the unspecified and loopback addresses, not IPv4-compatible 0.0.0.0 / 0.0.0.1.
const notCarried = (f: Form, ipv4: ArrayLike<number>) =>
  f.form === 'IPv4-compatible' && ipv4[0] === 0 && ipv4[1] === 0 && ipv4[2] === 0 && (ipv4[3] ?? 0) <= 1
const carriedBy = (f: Form, b: Uint8Array) => Array.from(b.subarray(f.at, f.at + 4)).map((x) => x ^ f.xor)

export function carriedIPv4(ip: IP): { form: string; address: IP }[] {
  if (ip.family === 4) return []
  const b = ip.bytes
  return FORMS.filter((f) => samePrefix(b, f.net, f.bits) && !notCarried(f, carriedBy(f, b))).map((f) => ({
    form: f.form,
    address: v4(carriedBy(f, b)),
  }))
}

// Whether the network `bytes`/`bits` (a deny entry) holds a spelling of the IPv4 address `ipv4`
// in some form: the entry lies inside the form's range, and its bits over the carried field
// agree with the address (bits the entry leaves open agree with anything; bits of the form
// outside the field, like 6to4's subnet or Teredo's client behind a server, are any). So
// `::ffff:0:127.0.0.2`, `::127.0.0.2`, `64:ff9b::127.0.0.2` and `2002:7f00:2::/48` all stand for
// 127.0.0.2, `64:ff9b::10.0.0.0/104` for 10.0.0.0/8, and `64:ff9b::/96` or `2002::/16` (every
// IPv4 address through that gateway) for every IPv4 address. An entry wider than a form
// (`2000::/3`, `::/0`) stands for no IPv4 address through it; `::/0` covers every address anyway.
function entryHoldsSpelling(bytes: Uint8Array, bits: number, ipv4: IP): boolean {
  return FORMS.some((f) => {
    if (bits < f.bits || !samePrefix(bytes, f.net, f.bits) || notCarried(f, ipv4.bytes)) return false
    for (let i = 0; i < 32 && f.at * 8 + i < bits; i++) {
      const byte = f.at + (i >> 3)
      const mask = 0x80 >> (i & 7)
      const want = ((ipv4.bytes[i >> 3] ?? 0) ^ f.xor) & mask
      if (((bytes[byte] ?? 0) & mask) !== want) return false
    }
    return true
  })
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
  // stands for, or an IPv4 address it carries through a gateway form (NAT64, 6to4, Teredo); and
  // an entry itself spelled in one of those forms (`::ffff:0:127.0.0.2`, `::127.0.0.2`,
  // `64:ff9b::127.0.0.2`, a CIDR in such a spelling) refuses the IPv4 address(es) it stands for,
  // in every spelling too (one definition for both sides: FORMS). Wider than `matches` on
  // purpose: a deny entry must hold in every spelling that could reach the machine it names.
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
    denies: (a) =>
      covers(a) ||
      (a.family === 4 ? [a] : carriedIPv4(a).map((c) => c.address)).some(
        (ipv4) => covers(ipv4) || entryHoldsSpelling(bytes, bits, ipv4),
      ),
  }
}
