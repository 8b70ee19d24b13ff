import { BlockList, isIP } from 'node:net'

// Address ranges a sandbox may not reach through the proxy unless an allow entry
// names them by IP or CIDR: they reach the host itself, its LAN, or cloud metadata.
const SPECIAL_V4: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'CGNAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
]
const SPECIAL_V6: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::ffff:0:0', 96, 'IPv4-mapped'],
  ['::', 96, 'IPv4-compatible'],
  ['64:ff9b::', 96, 'NAT64'],
  ['64:ff9b:1::', 48, 'NAT64'],
  ['100::', 64, 'discard'],
  ['2001::', 32, 'Teredo'],
  ['2001:db8::', 32, 'documentation'],
  ['2002::', 16, '6to4'],
  ['fc00::', 7, 'ULA'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
]

const lists = [
  ...SPECIAL_V4.map((e) => [...e, 'ipv4'] as const),
  ...SPECIAL_V6.map((e) => [...e, 'ipv6'] as const),
].map(([net, prefix, label, family]) => {
  const list = new BlockList()
  list.addSubnet(net, prefix, family)
  return { list, label, family }
})

// The reason an address is special, or undefined for an ordinary public address.
export function specialRange(address: string): string | undefined {
  const family = isIP(address)
  if (family === 0) return 'not an IP address'
  const type = family === 4 ? 'ipv4' : 'ipv6'
  for (const { list, label, family: f } of lists) {
    if (f === type && list.check(address, type)) return label
  }
  return undefined
}

// "10.0.0.0/8", "127.0.0.1", "::1" -> a matcher; undefined when the entry is a host pattern.
export function parseAddressPattern(entry: string): ((address: string) => boolean) | undefined {
  const [net, prefixText] = entry.split('/')
  const family = isIP(net ?? '')
  if (!net || family === 0) return undefined
  const type = family === 4 ? 'ipv4' : 'ipv6'
  const prefix = prefixText === undefined ? (family === 4 ? 32 : 128) : Number(prefixText)
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) return undefined
  const list = new BlockList()
  list.addSubnet(net, prefix, type)
  return (address) => {
    const f = isIP(address)
    return f !== 0 && list.check(address, f === 4 ? 'ipv4' : 'ipv6')
  }
}
