import { type EntrySyntax, type NetworkEntryInput, parseEntrySyntax } from '../../contracts/network-policy.js'
import { type AddressPattern, parseAddressPattern } from './address.js'

// The policy's entries as the egress matcher reads them: the contract's grammar
// (src/contracts/network-policy.ts) with the address pattern an IP or CIDR entry matches by.
export type ParsedEntry = EntrySyntax & { matchAddress?: AddressPattern }

// undefined when the entry is malformed.
export function parseEntry(raw: string): ParsedEntry | undefined {
  const e = parseEntrySyntax(raw)
  if (e?.kind !== 'address') return e
  const matchAddress = parseAddressPattern(e.value)
  return matchAddress ? { ...e, matchAddress } : undefined
}

// Whether a rule limits what plain HTTP may do: 'read-only' (GET/HEAD/OPTIONS), a method
// list without '*', or a path list. The evaluator refuses a tunnel to a host whose allowing
// rule narrows (a tunnel shows neither method nor path).
export function narrowsHttp(rule: NetworkEntryInput): boolean {
  if (typeof rule === 'string') return false
  return (
    rule.access === 'read-only' ||
    rule.paths !== undefined ||
    (rule.methods !== undefined && !rule.methods.includes('*'))
  )
}

// Whether an allow-list entry refuses something: a rule with access 'none', or one that
// narrows HTTP.
export const refusesSome = (e: NetworkEntryInput): boolean =>
  typeof e !== 'string' && (e.access === 'none' || narrowsHttp(e))

// How an entry is shown in refusals and probes.
export function entryText(e: NetworkEntryInput): string {
  if (typeof e === 'string') return e
  const extra = [
    e.access && e.access !== 'full' ? e.access : '',
    e.methods ? `methods ${e.methods.join('|')}` : '',
    e.paths ? `paths ${e.paths.join('|')}` : '',
  ].filter(Boolean)
  return extra.length ? `${e.host} (${extra.join(', ')})` : e.host
}

// A stable identity for sets and sorting (the warm-pool key, tightening checks).
export const entryKey = (e: NetworkEntryInput): string => (typeof e === 'string' ? e : JSON.stringify(e))

export function sortedEntries<T extends NetworkEntryInput>(entries: T[]): T[] {
  const byKey = new Map<string, T>()
  for (const e of entries) byKey.set(entryKey(e), e)
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, e]) => e)
}
