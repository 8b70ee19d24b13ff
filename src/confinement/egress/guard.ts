import { isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import { EGRESS_PORT } from '../environment.js'
import { classifyAddress } from './address.js'

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

function isLocalAddress(address: string): boolean {
  const cls = classifyAddress(address)
  if (cls.floor !== 'public' && /loopback|unspecified/.test(cls.label)) return true
  const bare = address.replace(/^::ffff:/i, '')
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.address === bare || a.address === address) return true
  return false
}

export function isProtectedDestination(address: string, port: number): boolean {
  return isIP(address) !== 0 && ports.has(port) && isLocalAddress(address)
}
