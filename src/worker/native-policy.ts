import { narrowsHttp, type ParsedEntry, parseEntry } from '../confinement/egress/network-entries.js'
import { readOnlyRoots, readOnlyWhy } from '../confinement/modes.js'
import type { NetworkEntry, NetworkPolicy } from '../contracts/network-policy.js'
import type { AuditPolicy } from '../native/index.js'
import { VisError } from '../util/errors.js'
import { guestDir } from '../util/home.js'
import { formatIP, type IP, parseIP } from '../util/ip.js'
import type { WorkerPolicy } from './worker-policy.js'

// Everything the hook can grant: the kernel layers are then the only thing in the way.
export function permissiveNativePolicy(): AuditPolicy {
  return { readOnly: ['/'], readWrite: ['/'], network: { enabled: true }, processes: true, ctypes: true }
}

// The in-interpreter audit policy derived from the worker's spawn policy: the
// distribution and the guest runtime readable, the roots (and the worker's outbox)
// read-write. Processes and
// ctypes stay off: Python never spawns (the shell tool runs on the host side).
// With an egress proxy (the jailed worker's only way out), the hook matches no hosts:
// every connection and lookup goes to the proxy, whose evaluator is the one policy check
// (vis_guest/net.py turns its refusals into PermissionError); a matcher here would only
// disagree with it (it refused the relay's own address). Without a jail there is no
// proxy, and the hook's host list (auditNetwork) is the only (bypassable) check left.
export function toNativePolicy(
  p: WorkerPolicy,
  distRoot: string,
  writable: string[] = [],
  opts: { egressProxy?: boolean } = {},
): AuditPolicy {
  const frozen = readOnlyRoots(p)
  const why = readOnlyWhy(p)
  return {
    readOnly: [distRoot, guestDir, ...(p.mounts ?? []).map((m) => m.target), ...frozen],
    readWrite: [...p.roots.filter((r) => !frozen.includes(r)), ...writable],
    ...(frozen.length > 0 ? { readOnlyRoots: frozen } : {}),
    ...(frozen.length > 0 && why ? { readOnlyWhy: why } : {}),
    network: opts.egressProxy ? { enabled: p.network.enabled } : auditNetwork(p.network),
    processes: false,
    ctypes: false,
  }
}

// The hook's host list for a worker without an egress proxy, giving the evaluator's verdict
// (src/confinement/egress/evaluate.ts) on every connection by name or address, except the
// proxy's own floor (metadata names, address classes), which needs the proxy. The hook knows
// only `host[:port]`, `*.domain[:port]` and `*[:port]`, and no deny list, so each entry is
// written in those terms and what they cannot say is refused (policy.audit-unexpressible),
// never dropped: a deny overlapping part of what is allowed, an address range, an IPv6
// address with ports. A rule narrowing HTTP methods or paths allows no connection (the
// evaluator refuses a tunnel to it, and every connection the hook sees is one). An empty
// allow list is every destination, as in the proxy; a list that allows nothing is the
// network off.
export function auditNetwork(net: NetworkPolicy): AuditPolicy['network'] {
  if (!net.enabled) return { enabled: false }
  // The evaluator's order: a specific deny, then a specific allow, then a narrowing rule,
  // then a `*` deny, then a `*` allow or the empty list.
  const specificDeny: Grant[] = []
  const anyDeny: Grant[] = []
  const specificAllow: Grant[] = []
  const anyAllow: Grant[] = []
  const narrowing: Grant[] = []
  const refusing = (g: Grant) => (g.kind === 'any' ? anyDeny : specificDeny).push(g)
  for (const entry of net.deny) refusing(grant(entry))
  for (const entry of net.allow) {
    const g = grant(entry)
    if (typeof entry !== 'string' && entry.access === 'none') refusing(g)
    else if (narrowsHttp(entry)) narrowing.push(g)
    else (g.kind === 'any' ? anyAllow : specificAllow).push(g)
  }
  const granted: Grant[] = []
  for (const a of specificAllow) {
    if (specificDeny.some((d) => covers(d, a))) continue
    const d = specificDeny.find((x) => overlaps(x, a))
    if (d) throw unexpressible(`the deny entry '${d.text}' refusing part of what '${a.text}' allows`)
    granted.push(a)
  }
  const everything: Grant = { text: '(the empty allow list)', kind: 'any', value: '*' }
  let all = false
  for (const a of net.allow.length === 0 ? [everything] : anyAllow) {
    if (anyDeny.some((d) => covers(d, a))) continue
    const d = [...specificDeny, ...narrowing, ...anyDeny].find((x) => overlaps(x, a))
    if (d) throw unexpressible(`the entry '${d.text}' refusing part of what '${a.text}' allows`)
    if (a === everything) all = true
    else granted.push(a)
  }
  if (all) return { enabled: true }
  if (granted.length === 0) return { enabled: false }
  return { enabled: true, allow: [...new Set(granted.flatMap(hookEntries))] }
}

type Grant = ParsedEntry & { text: string }

function grant(entry: NetworkEntry): Grant {
  const text = typeof entry === 'string' ? entry : entry.host
  const parsed = parseEntry(text)
  // The schema refuses malformed entries before a policy gets here.
  if (!parsed) throw unexpressible(`'${text}', which is not a network entry`)
  return { ...parsed, text }
}

const inDomain = (name: string, domain: string) => name === domain || name.endsWith(`.${domain}`)

// The single address an allow entry names (a range gives undefined).
function single(g: Grant): IP | undefined {
  const [ip, prefix] = g.value.split('/')
  const parsed = parseIP(ip ?? '')
  if (!parsed || (prefix !== undefined && Number(prefix) !== (parsed.family === 4 ? 32 : 128)))
    return undefined
  return parsed
}

// Whether `d` matches some of the connections `a` matches (its hosts, then its ports).
function overlaps(d: Grant, a: Grant): boolean {
  if (d.ports && a.ports && !d.ports.some((p) => a.ports?.includes(p))) return false
  if (d.kind === 'any' || a.kind === 'any') return true
  // A refusing address entry also refuses every name that resolves into it (evaluate.ts), which
  // the hook cannot know before the connection: it may overlap any name.
  if (d.kind === 'address' && a.kind !== 'address') return true
  // Otherwise names match name entries only, addresses address entries only.
  if ((d.kind === 'address') !== (a.kind === 'address')) return false
  if (d.kind === 'address') {
    const ip = single(a)
    return ip === undefined || d.matchAddress?.matches(ip) !== false
  }
  return inDomain(a.value, d.value) || inDomain(d.value, a.value)
}

// Whether `d` matches every connection `a` matches.
function covers(d: Grant, a: Grant): boolean {
  if (d.ports && !(a.ports?.every((p) => d.ports?.includes(p)) ?? false)) return false
  if (d.kind === 'any') return true
  if (a.kind === 'any' || (d.kind === 'address') !== (a.kind === 'address')) return false
  if (d.kind === 'address') {
    const ip = single(a)
    return ip !== undefined && d.matchAddress?.matches(ip) === true
  }
  // A name entry is the domain and below it; a subdomains entry only below it.
  if (d.kind === 'name') return inDomain(a.value, d.value)
  return a.kind === 'subdomains' ? inDomain(a.value, d.value) : a.value.endsWith(`.${d.value}`)
}

// One allow entry in the hook's syntax.
function hookEntries(g: Grant): string[] {
  let hosts: string[]
  if (g.kind === 'any') hosts = ['*']
  else if (g.kind === 'address') hosts = [hookAddress(g)]
  // The hook matches `*.4` against the text of an address too (`1.2.3.4`).
  else if (/(^|\.)\d+$/.test(g.value)) throw unexpressible(`'${g.text}', whose last label is a number`)
  else if (g.kind === 'name') hosts = [g.value, `*.${g.value}`]
  else hosts = [`*.${g.value}`]
  const ports = g.ports
  return ports ? hosts.flatMap((h) => ports.map((p) => `${h}:${p}`)) : hosts
}

function hookAddress(g: Grant): string {
  const ip = single(g)
  if (!ip) throw unexpressible(`the address range '${g.text}'`)
  // The hook reads `host:port` at a single colon: an IPv6 address cannot carry a port.
  if (ip.family === 6 && g.ports) throw unexpressible(`the IPv6 address with ports '${g.text}'`)
  return formatIP(ip)
}

function unexpressible(what: string): VisError {
  return new VisError(
    'policy.audit-unexpressible',
    `without the OS jail the network policy is checked by the audit hook alone, which cannot express ${what}; ` +
      'run the session jailed (the egress proxy enforces every rule) or simplify the allow and deny lists',
    { op: 'confine' },
  )
}
