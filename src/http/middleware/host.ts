import { isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import { errorAnswer } from '../errors.js'
import type { Refusal } from './refusal.js'

// DNS rebinding: a page at evil.test points its name at 127.0.0.1 and then reads our answers as
// "same origin". The browser still sends `Host: evil.test`, so only names we know are served.

// Host header → bare lower-case host: `[::1]:7878` → `::1`, `Localhost.:80` → `localhost`.
export function hostName(header: string): string {
  const h = header.trim().toLowerCase()
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined)
  const colon = h.lastIndexOf(':')
  const bare = colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h
  return bare.endsWith('.') ? bare.slice(0, -1) : bare
}

export function isLoopbackName(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (h === 'localhost' || h.endsWith('.localhost') || h === 'ip6-localhost') return true
  if (isIP(h) === 4) return h.startsWith('127.')
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h)
  return false
}

// The addresses of this machine's interfaces: a wildcard bind answers on each of them, and an IP
// literal in Host cannot be rebound (rebinding needs a name the attacker controls).
function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined)
    .map((a) => a.address.toLowerCase())
}

export type HostCheckOptions = {
  // Extra names (or addresses) the server answers to, e.g. `vis.internal` behind a proxy.
  allowedHosts?: readonly string[]
  // The address the server is bound to, when known: a specific one is allowed as itself, a
  // wildcard one (0.0.0.0, ::) allows every interface address.
  bindHost?: string
}

export function hostAllowList(opts: HostCheckOptions): (host: string) => boolean {
  const extra = new Set((opts.allowedHosts ?? []).map((h) => hostName(h)))
  const bind = opts.bindHost?.replace(/^\[|\]$/g, '').toLowerCase()
  const wildcard = bind === '0.0.0.0' || bind === '::'
  if (bind && !wildcard) extra.add(bind)
  let ifaces: Set<string> | undefined
  const decide = (host: string) => {
    if (isLoopbackName(host) || extra.has(host)) return true
    if (!wildcard || isIP(host) === 0) return false
    ifaces ??= new Set(interfaceAddresses())
    return ifaces.has(host)
  }
  // Every request asks about the same one or two names: remember the answers (bounded, since a
  // client picks the Host it sends).
  const known = new Map<string, boolean>()
  return (host) => {
    let ok = known.get(host)
    if (ok === undefined) {
      ok = decide(host)
      if (known.size < 64) known.set(host, ok)
    }
    return ok
  }
}

// A request whose Host is not a name this server answers to: 421 Misdirected Request.
export function hostRefusal(
  allowed: (host: string) => boolean,
  header: string | undefined,
): Refusal | undefined {
  const host = header === undefined ? '' : hostName(header)
  if (allowed(host)) return undefined
  return errorAnswer(
    'http.host-not-allowed',
    `This server does not answer to Host ${JSON.stringify(header ?? '')}: use a loopback address, or start it with --allow-host ${host || 'NAME'}.`,
    { host: header ?? null },
  )
}
