import type { BlockList } from 'node:net'
import { nodeNet } from './node-net.js'

// The address floor: what a resolved address may be, whatever the lists say.
// - 'never': link-local (cloud metadata at 169.254.169.254), unspecified, multicast,
//   broadcast/reserved: refused always, even when an entry names them.
// - 'private': loopback, RFC 1918, CGNAT, ULA, and ranges that are not the public
//   internet (documentation/TEST-NET, benchmarking, IETF, NAT64, 6to4, Teredo, discard,
//   site-local): reachable only when the entry that allowed the connection is an IP
//   literal or CIDR naming the address.
// - anything else is public.
// IPv4-mapped/compatible IPv6 addresses are classified by the IPv4 address they carry.
type Range = [string, number, string, 'never' | 'private']
const V4: Range[] = [
  ['0.0.0.0', 8, 'unspecified', 'never'],
  ['10.0.0.0', 8, 'private (RFC 1918)', 'private'],
  ['100.64.0.0', 10, 'CGNAT', 'private'],
  ['127.0.0.0', 8, 'loopback', 'private'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)', 'never'],
  ['172.16.0.0', 12, 'private (RFC 1918)', 'private'],
  ['192.0.0.0', 24, 'IETF protocol', 'private'],
  ['192.0.2.0', 24, 'documentation (TEST-NET-1)', 'private'],
  ['192.168.0.0', 16, 'private (RFC 1918)', 'private'],
  ['198.18.0.0', 15, 'benchmarking', 'private'],
  ['198.51.100.0', 24, 'documentation (TEST-NET-2)', 'private'],
  ['203.0.113.0', 24, 'documentation (TEST-NET-3)', 'private'],
  ['224.0.0.0', 4, 'multicast', 'never'],
  ['240.0.0.0', 4, 'reserved', 'never'],
]
const V6: Range[] = [
  ['::', 128, 'unspecified', 'never'],
  ['::1', 128, 'loopback', 'private'],
  ['64:ff9b::', 96, 'NAT64', 'private'],
  ['64:ff9b:1::', 48, 'NAT64', 'private'],
  ['100::', 64, 'discard', 'private'],
  ['2001::', 32, 'Teredo', 'private'],
  ['2001:db8::', 32, 'documentation', 'private'],
  ['2002::', 16, '6to4', 'private'],
  ['fc00::', 7, 'ULA', 'private'],
  ['fe80::', 10, 'link-local', 'never'],
  ['fec0::', 10, 'site-local', 'private'],
  ['ff00::', 8, 'multicast', 'never'],
]

type CompiledRange = { list: BlockList; label: string; floor: 'never' | 'private'; family: 'ipv4' | 'ipv6' }
let compiledRanges: CompiledRange[] | undefined
// Built on first use (node-net.ts says why).
function compiled(): CompiledRange[] {
  compiledRanges ??= [
    ...V4.map((r) => [...r, 'ipv4'] as const),
    ...V6.map((r) => [...r, 'ipv6'] as const),
  ].map(([net, prefix, label, floor, family]) => {
    const list = new (nodeNet().BlockList)()
    list.addSubnet(net, prefix, family)
    return { list, label, floor, family }
  })
  return compiledRanges
}

export type AddressClass = { floor: 'public' } | { floor: 'never' | 'private'; label: string }

// Ranges a test lab declares public (TEST-NET addresses of a namespace the test made).
// Set only through lab.ts, which nothing but the test suite imports.
let publicOverride: BlockList | undefined
export function setPublicRangesForLab(cidrs: string[] | undefined): void {
  if (!cidrs?.length) {
    publicOverride = undefined
    return
  }
  const list = new (nodeNet().BlockList)()
  for (const c of cidrs) {
    const [net, prefix] = c.split('/')
    const fam = nodeNet().isIP(net ?? '') === 6 ? 'ipv6' : 'ipv4'
    list.addSubnet(net ?? '', Number(prefix ?? (fam === 'ipv4' ? 32 : 128)), fam)
  }
  publicOverride = list
}

// "::ffff:1.2.3.4" and "::1.2.3.4" carry an IPv4 address.
function embeddedV4(address: string): string | undefined {
  const m = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (m) return m[1]
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address)
  if (!hex) return undefined
  const [hi, lo] = [Number.parseInt(hex[1] ?? '', 16), Number.parseInt(hex[2] ?? '', 16)]
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

export function classifyAddress(address: string): AddressClass {
  const family = nodeNet().isIP(address)
  if (family === 0) return { floor: 'never', label: 'not an IP address' }
  const v4 = family === 6 ? embeddedV4(address) : undefined
  if (v4 !== undefined) {
    const inner = classifyAddress(v4)
    return inner.floor === 'public' ? { floor: 'private', label: 'IPv4-mapped' } : inner
  }
  const type = family === 4 ? 'ipv4' : 'ipv6'
  for (const { list, label, floor, family: f } of compiled()) {
    if (f !== type || !list.check(address, type)) continue
    if (floor === 'private' && publicOverride?.check(address, type)) return { floor: 'public' }
    return { floor, label }
  }
  return { floor: 'public' }
}

// The reason an address is special, or undefined for an ordinary public address.
export function specialRange(address: string): string | undefined {
  const c = classifyAddress(address)
  return c.floor === 'public' ? undefined : c.label
}

// "10.0.0.0/8", "127.0.0.1", "::1" -> a matcher; undefined when the entry is a host pattern.
export function parseAddressPattern(entry: string): ((address: string) => boolean) | undefined {
  const [net, prefixText, ...rest] = entry.split('/')
  const family = nodeNet().isIP(net ?? '')
  if (!net || family === 0 || rest.length > 0) return undefined
  const type = family === 4 ? 'ipv4' : 'ipv6'
  const prefix = prefixText === undefined ? (family === 4 ? 32 : 128) : Number(prefixText)
  if (!/^\d*$/.test(prefixText ?? '') || !Number.isInteger(prefix) || prefix < 0) return undefined
  if (prefix > (family === 4 ? 32 : 128)) return undefined
  const list = new (nodeNet().BlockList)()
  list.addSubnet(net, prefix, type)
  return (address) => {
    const f = nodeNet().isIP(address)
    if (f === 0) return false
    const v4 = f === 6 ? embeddedV4(address) : undefined
    if (v4 !== undefined && type === 'ipv4') return list.check(v4, 'ipv4')
    return list.check(address, f === 4 ? 'ipv4' : 'ipv6')
  }
}
