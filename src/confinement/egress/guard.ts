import { networkInterfaces } from 'node:os'
import { as16, type IP, parseIP } from '../../util/ip.js'
import { EGRESS_PORT } from '../environment.js'
import { carriedIPv4, classifyAddress, unmapped } from './address.js'

// The host's own listening ports (the vis HTTP server, the egress relay's port) are
// never an egress destination on any of the host's addresses, whatever the lists say:
// a sandbox allowed `127.0.0.1` must still not drive the server that runs it.
const ports = new Map<number, number>([[EGRESS_PORT, 1]])

export function protectPort(port: number): () => void {
  ports.set(port, (ports.get(port) ?? 0) + 1)
  let released = false
  return () => {
    if (released) return
    released = true
    const n = (ports.get(port) ?? 1) - 1
    if (n > 0 || port === EGRESS_PORT) ports.set(port, Math.max(n, 1))
    else ports.delete(port)
  }
}

const same = (a: IP, b: IP) => as16(a).every((x, i) => x === as16(b)[i])

// Loopback, unspecified, or one of this host's interface addresses: in any spelling, as the
// IPv4 address an IPv6 form carries, or behind a gateway form (6to4, Teredo, NAT64).
export function isLocalAddress(ip: IP): boolean {
  const candidates = [ip, unmapped(ip), ...carriedIPv4(ip).map((c) => c.address)]
  const local = Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((a) => parseIP(a.address))
    .filter((a): a is IP => a !== undefined)
  return candidates.some((c) => {
    const cls = classifyAddress(c)
    if (cls.floor !== 'public' && /^(loopback|unspecified)$/.test(cls.label)) return true
    return local.some((l) => same(l, c))
  })
}

export function isProtectedDestination(address: string | IP, port: number): boolean {
  const ip = typeof address === 'string' ? parseIP(address) : address
  return ip !== undefined && ports.has(port) && isLocalAddress(ip)
}
