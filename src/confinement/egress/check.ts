import { canonicalIP } from '../../util/ip.js'
import {
  type CompiledPolicy,
  type EgressRequest,
  type EgressVerdict,
  evaluate,
  isAddress,
  normalizeHost,
} from './evaluate.js'
import { resolveName } from './resolve.js'

export type Checked =
  | { allowed: true; address: string; addresses: string[]; verdict: EgressVerdict }
  | { allowed: false; reason: string; verdict: EgressVerdict; addresses?: string[] }

const MAX_REMEMBERED = 4096

// One sandbox's egress checks: resolves names itself, checks EVERY answer, and returns
// the address it checked, which is the one dialled (no second lookup to rebind). Every
// address, given or resolved, is in its canonical text (ip.ts): what is dialled is exactly
// the bytes that were judged, with no zone id and no spelling left for node to re-read.
// Addresses it handed to the guest's getaddrinfo are remembered with their names, so a
// later connect to the bare address is judged by the name that produced it.
export class EgressChecker {
  private readonly names = new Map<string, Set<string>>()

  constructor(public policy: CompiledPolicy) {}

  async check(req: EgressRequest): Promise<Checked> {
    const host = normalizeHost(req.host)
    if (isAddress(host)) return this.checkAddress({ ...req, host })
    // The name alone first: a name the lists refuse is never looked up.
    const early = evaluate(this.policy, { ...req, host })
    if (!early.allowed) return { allowed: false, reason: early.reason, verdict: early }
    let answers: string[]
    try {
      answers = await resolveName(host)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err)
      return { allowed: false, reason: `cannot resolve ${host}: ${code}`, verdict: early }
    }
    const addresses = answers.map((a) => canonicalIP(a) ?? a)
    const odd = addresses.find((a) => !isAddress(a))
    if (odd !== undefined)
      return {
        allowed: false,
        reason: `${host} resolved to ${odd}, which is not an IP address`,
        verdict: early,
      }
    if (addresses.length === 0) return { allowed: false, reason: `${host} has no addresses`, verdict: early }
    // Every answer must pass: a name mixing public and private answers is an attack.
    let first: EgressVerdict | undefined
    for (const address of addresses) {
      const v = evaluate(this.policy, { ...req, host, address })
      if (!v.allowed) return { allowed: false, reason: v.reason, verdict: v, addresses }
      first ??= v
    }
    return { allowed: true, address: addresses[0] as string, addresses, verdict: first as EgressVerdict }
  }

  // The verdict today's policy gives a connection checked earlier (at `address`), with no
  // new lookup: a tightening re-judges what is open with it (proxy.ts cuts the refused).
  recheck(req: EgressRequest, address: string): EgressVerdict {
    const host = normalizeHost(req.host)
    if (isAddress(host)) return this.checkAddress({ ...req, host }).verdict
    return evaluate(this.policy, { ...req, host, address })
  }

  // A bare address: by itself, or by a name that resolved to it for this sandbox (a name an
  // allow entry admits opens the address it resolved to; it never reopens a denied one).
  private checkAddress(req: EgressRequest & { host: string }): Checked {
    const own = evaluate(this.policy, { ...req, address: req.host })
    if (own.allowed) return { allowed: true, address: req.host, addresses: [req.host], verdict: own }
    // A deny entry naming the address wins over any name that led to it.
    if (own.deniedBy !== undefined) return { allowed: false, reason: own.reason, verdict: own }
    let byName: EgressVerdict | undefined
    for (const name of this.names.get(req.host) ?? []) {
      const v = evaluate(this.policy, { ...req, host: name, address: req.host })
      if (v.allowed) return { allowed: true, address: req.host, addresses: [req.host], verdict: v }
      byName ??= v
    }
    // The name the guest looked up explains a refusal better than its bare address.
    const shown = byName ?? own
    return { allowed: false, reason: shown.reason, verdict: shown }
  }

  remember(name: string, addresses: string[]): void {
    if (this.names.size > MAX_REMEMBERED) this.names.clear()
    for (const a of addresses) {
      const key = normalizeHost(a)
      const set = this.names.get(key) ?? new Set<string>()
      set.add(normalizeHost(name))
      this.names.set(key, set)
    }
  }
}
