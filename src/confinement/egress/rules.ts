import { parseAddressPattern, specialRange } from './address.js'

export type EgressRules = { allow: string[]; deny: string[] }
export type Verdict = { ok: true } | { ok: false; reason: string }

// "example.com" matches itself; "*.example.com" matches subdomains only; "*" matches any host.
function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase().replace(/\.$/, '')
  const h = host.toLowerCase().replace(/\.$/, '')
  if (p === '*') return true
  if (p.startsWith('*.')) return h.endsWith(p.slice(1))
  return p === h
}

function entryMatches(entry: string, host: string, address?: string): boolean {
  const byAddress = parseAddressPattern(entry)
  if (byAddress) return address !== undefined && byAddress(address)
  return hostMatches(entry, host)
}

// Before resolving: the name alone against the lists.
export function checkHost(rules: EgressRules, host: string): Verdict {
  if (rules.deny.some((d) => entryMatches(d, host)))
    return { ok: false, reason: `${host} is on the deny list` }
  const named = rules.allow.filter((a) => !parseAddressPattern(a))
  const byAddress = rules.allow.some((a) => parseAddressPattern(a))
  if (rules.allow.length > 0 && !named.some((a) => hostMatches(a, host)) && !byAddress) {
    return { ok: false, reason: `${host} is not on the allow list` }
  }
  return { ok: true }
}

// After resolving: every address the proxy might dial.
export function checkAddress(rules: EgressRules, host: string, address: string): Verdict {
  if (rules.deny.some((d) => entryMatches(d, host, address))) {
    return { ok: false, reason: `${address} is on the deny list` }
  }
  const explicitlyAllowed = rules.allow.some((a) => parseAddressPattern(a)?.(address))
  const special = specialRange(address)
  if (special && !explicitlyAllowed) {
    return { ok: false, reason: `${host} resolves to ${address} (${special})` }
  }
  if (rules.allow.length > 0 && !explicitlyAllowed && !rules.allow.some((a) => hostMatches(a, host))) {
    return { ok: false, reason: `${host} (${address}) is not on the allow list` }
  }
  return { ok: true }
}
