import type { NetworkEntry } from '../../contracts/network-policy.js'
import { canonicalIP, formatIP, parseIP } from '../../util/ip.js'
import { classifyAddress, privateIPv4 } from './address.js'
import { isLocalAddress, isProtectedDestination } from './guard.js'
import { entryText, type ParsedEntry, parseEntry } from './network-entries.js'

// The evaluator of the one network policy (policy.ts). Decision order:
// 1. metadata names are refused always;
// 2. a specific (non-`*`) deny beats a specific allow; an allow rule with access 'none'
//    counts as a deny; an IP/CIDR deny entry judges every address a name resolved to, in
//    every spelling (an IP/CIDR allow entry never admits a name);
// 3. then `*` on either list (deny first);
// 4. an empty allow list (network on) allows every public destination;
// 5. after resolution, on EVERY resolved address: the address floor (address.ts), and
//    never the host's own listening ports (the vis server, the egress relay) on a local
//    address.
// HTTP method/path rules can only be checked on plain HTTP through the proxy: a tunnel
// (CONNECT, raw TCP) to a host whose allowing rule narrows methods or paths is refused.

export type EgressRequest = {
  host: string // a name or an IP literal, as the client gave it
  port?: number // absent for a name lookup without a port
  address?: string // the resolved address being checked (absent: name-level only)
  method?: string // plain HTTP only
  path?: string
  tunnel?: boolean // CONNECT or raw TCP: method and path are invisible
}

export type RuleVerdict = { list: 'allow' | 'deny'; entry: string; verdict: string }

export type EgressVerdict = {
  allowed: boolean
  reason: string // what allowed or refused it, naming the rule
  rule?: string // the deciding entry
  // Set when a specific deny entry refused it: nothing (no name it was looked up by) reopens it.
  deniedBy?: string
  trace: RuleVerdict[]
}

type Compiled = {
  list: 'allow' | 'deny'
  text: string
  parsed: ParsedEntry
  methods?: Set<string> // undefined = every method
  paths?: RegExp[]
}

export type CompiledPolicy = { enabled: boolean; allow: Compiled[]; deny: Compiled[]; allowEmpty: boolean }

const READ_ONLY = ['GET', 'HEAD', 'OPTIONS']

// Names that reach cloud metadata services: refused whatever the lists say.
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.com',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
])

// A name in lower case without its trailing dot, or an address in its one canonical text
// (ip.ts): every spelling of an address is judged, remembered and dialled as that text.
export const normalizeHost = (host: string) => {
  const name = host.trim().toLowerCase()
  return canonicalIP(name) ?? name.replace(/\.$/, '')
}

// What no host name contains: a host with one of these that is not an address is malformed
// (an IPv6 spelling this parser refuses must not reach a resolver that might accept it).
const NOT_A_NAME = /[:%[\]\s/\\@]/

export const isAddress = (host: string) => parseIP(host) !== undefined

function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.')
  return new RegExp(`^${body}$`)
}

function compile(entry: NetworkEntry, list: 'allow' | 'deny'): Compiled {
  const host = typeof entry === 'string' ? entry : entry.host
  const parsed = parseEntry(host)
  if (!parsed) throw new Error(`invalid network entry ${host}`) // the schema refuses these first
  const c: Compiled = { list, text: entryText(entry), parsed }
  if (typeof entry !== 'string') {
    if (entry.access === 'none') c.list = 'deny'
    let methods = entry.methods?.includes('*') ? undefined : entry.methods?.map((m) => m.toUpperCase())
    if (entry.access === 'read-only') methods = (methods ?? READ_ONLY).filter((m) => READ_ONLY.includes(m))
    if (methods) c.methods = new Set(methods)
    if (entry.paths) c.paths = entry.paths.map(globToRegExp)
  }
  return c
}

export function compilePolicy(p: {
  enabled: boolean
  allow: NetworkEntry[]
  deny: NetworkEntry[]
}): CompiledPolicy {
  const all = [...p.allow.map((e) => compile(e, 'allow')), ...p.deny.map((e) => compile(e, 'deny'))]
  return {
    enabled: p.enabled,
    allow: all.filter((c) => c.list === 'allow'),
    deny: all.filter((c) => c.list === 'deny'),
    allowEmpty: p.allow.length === 0,
  }
}

function targetMatches(c: Compiled, host: string, address: string | undefined): boolean {
  const e = c.parsed
  if (e.kind === 'any') return true
  if (e.kind === 'address') {
    // A DENY entry judges the address being dialled, however the client named it: a name that
    // resolves into a denied address is refused on that address (check.ts judges every answer),
    // and so is every spelling of it (IPv4-mapped, carried by NAT64/6to4/Teredo: `denies`).
    if (c.list === 'deny') {
      const ip = parseIP(address ?? host)
      return ip !== undefined && e.matchAddress?.denies(ip) === true
    }
    // An ALLOW entry admits connections made to an address, never a name that happens to
    // resolve into it: names are matched by name entries only, so a name off the list is
    // refused before any lookup, and a name never reaches a private address.
    const ip = isAddress(host) ? parseIP(address ?? host) : undefined
    return ip !== undefined && e.matchAddress?.matches(ip) === true
  }
  if (isAddress(host)) return false
  if (e.kind === 'name') return host === e.value || host.endsWith(`.${e.value}`)
  return host.endsWith(`.${e.value}`)
}

const portMatches = (e: ParsedEntry, port: number | undefined) =>
  e.ports === undefined || port === undefined || e.ports.includes(port)

// Whether an allow entry lets this request through, beyond matching its host and port.
function httpRefusal(c: Compiled, req: EgressRequest): string | undefined {
  if (!c.methods && !c.paths) return undefined
  if (req.tunnel) {
    return `'${c.text}' limits HTTP methods or paths, which a tunnel (HTTPS CONNECT or raw TCP) does not show; use plain http:// through the proxy`
  }
  if (req.method === undefined) return undefined // a lookup: the request decides later
  const method = req.method.toUpperCase()
  if (c.methods && !c.methods.has(method)) return `${method} is not allowed by '${c.text}'`
  const path = req.path ?? '/'
  const bare = path.split('?')[0] ?? path
  // A path rule judges the path as written; a server that decodes %2F (or %5C) before it
  // resolves `..` would serve another path than the one judged, so such a path is refused.
  if (c.paths && /%(2f|5c|00)/i.test(bare))
    return `path ${path} carries an encoded '/', '\\' or NUL, which '${c.text}' cannot judge; write it plainly`
  if (c.paths && !c.paths.some((r) => r.test(bare))) return `path ${path} is not allowed by '${c.text}'`
  return undefined
}

const where = (req: EgressRequest) => `${req.host}${req.port !== undefined ? `:${req.port}` : ''}`

export function evaluate(policy: CompiledPolicy, input: EgressRequest): EgressVerdict {
  const req = {
    ...input,
    host: normalizeHost(input.host),
    address: input.address === undefined ? undefined : normalizeHost(input.address),
  }
  const trace: RuleVerdict[] = []
  const refuse = (reason: string, rule?: string): EgressVerdict => ({ allowed: false, reason, rule, trace })
  if (!policy.enabled) return refuse('network access is off for this session')
  if (METADATA_NAMES.has(req.host)) return refuse(`${req.host} is a cloud metadata name: always refused`)
  if (!isAddress(req.host) && NOT_A_NAME.test(req.host))
    return refuse(`${req.host} is neither a host name nor an IP address`)

  const matched = (c: Compiled) => targetMatches(c, req.host, req.address) && portMatches(c.parsed, req.port)
  let specificDeny: Compiled | undefined
  let anyDeny: Compiled | undefined
  for (const c of policy.deny) {
    const m = matched(c)
    trace.push({ list: 'deny', entry: c.text, verdict: m ? 'matches: refuse' : 'no match' })
    if (m && c.parsed.kind === 'any') anyDeny ??= c
    else if (m) specificDeny ??= c
  }
  let chosen: Compiled | undefined
  let anyAllow: Compiled | undefined
  let narrowed: string | undefined
  for (const c of policy.allow) {
    if (!matched(c)) {
      trace.push({ list: 'allow', entry: c.text, verdict: 'no match' })
      continue
    }
    const why = httpRefusal(c, req)
    trace.push({ list: 'allow', entry: c.text, verdict: why ? `matches, but ${why}` : 'matches: allow' })
    if (why) narrowed ??= why
    else if (c.parsed.kind === 'any') anyAllow ??= c
    else chosen ??= c
  }
  if (specificDeny) {
    const via =
      req.address !== undefined && req.address !== req.host && specificDeny.parsed.kind === 'address'
        ? ` (it resolves to ${req.address})`
        : ''
    const text = specificDeny.text
    return { ...refuse(`${where(req)}${via} is refused by deny entry '${text}'`, text), deniedBy: text }
  }
  if (!chosen && narrowed) return refuse(`${where(req)}: ${narrowed}`)
  if (!chosen && anyDeny) return refuse(`${where(req)} is refused by deny entry '*'`, '*')
  chosen ??= anyAllow
  if (!chosen && !policy.allowEmpty) {
    const list = policy.allow.map((c) => c.text).join(', ')
    return refuse(`${where(req)} is not on the allow list (${list})`)
  }
  const rule = chosen?.text
  const allowedBy = rule ? `allow entry '${rule}'` : 'the empty allow list (every public destination)'

  if (req.address !== undefined) {
    const floor = floorRefusal(req, chosen)
    if (floor) return refuse(floor, rule)
  }
  return { allowed: true, reason: `${where(req)} is allowed by ${allowedBy}`, rule, trace }
}

function floorRefusal(req: EgressRequest, chosen: Compiled | undefined): string | undefined {
  const address = req.address as string
  const shown = address === req.host ? address : `${req.host} resolves to ${address}`
  const ip = parseIP(address)
  if (!ip) return `${shown} is not an IP address: never dialled`
  const cls = classifyAddress(ip)
  if (cls.floor === 'never') return `${shown} (${cls.label}): never reachable, whatever the lists say`
  const pattern = chosen?.parsed.kind === 'address' ? chosen.parsed.matchAddress : undefined
  if (cls.floor === 'private' && !pattern) {
    return `${shown} (${cls.label}): reachable only through an allow entry naming that IP or CIDR`
  }
  // A private address is named only by an entry inside its special range: `::/0` covers
  // ::1, fc00::/7 and 64:ff9b:1::/48 but names none of them.
  if (cls.floor === 'private' && ip.family === 6 && !pattern?.names(ip)) {
    return `${shown} (${cls.label}): reachable only through an allow entry naming that IP or a CIDR inside its range`
  }
  // A private IPv4 address, bare or inside an IPv6 form, is named only by an IPv4 entry.
  const unnamed = privateIPv4(ip).find((v4) => !pattern?.namesIPv4(v4))
  if (unnamed) {
    const inner = classifyAddress(unnamed)
    const label = inner.floor === 'public' ? '' : ` (${inner.label})`
    const what = ip.family === 4 ? `${shown}${label}` : `${shown} carries ${formatIP(unnamed)}${label}`
    return `${what}: reachable only through an allow entry naming that IPv4 address or range`
  }
  // One of this host's own public addresses (on an interface, in any spelling; loopback and
  // private ones are held by the floor above): the relay
  // dials from the host, so it would reach every service the host binds to 0.0.0.0. Only an
  // entry naming that very address (no CIDR, no '*') opens it.
  if (
    cls.floor === 'public' &&
    isLocalAddress(ip) &&
    !(pattern?.matches(ip) && !chosen!.parsed.value.includes('/'))
  ) {
    return `${shown} is an address of this host: reachable only through an allow entry naming that IP`
  }
  if (req.port !== undefined && isProtectedDestination(ip, req.port)) {
    return `${shown}:${req.port} is the vis host's own listening port (server or egress relay): never reachable`
  }
  return undefined
}
