import { lstatSync, readlinkSync, realpathSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, resolve } from 'node:path'
import { z } from 'zod'
import { VisError } from '../util/errors.js'

// The audit hook's policy. Paths are resolved (symlinks, ..) before they reach C,
// where every path-taking event is checked against them, also resolved.
export const AuditPolicySchema = z.object({
  readOnly: z.array(z.string().min(1)),
  readWrite: z.array(z.string().min(1)),
  // Roots the session reads but may not change (a read-only session; the other roots of a
  // review): a write refused under one says readOnlyWhy, not "outside the read-write roots".
  readOnlyRoots: z.array(z.string().min(1)).optional(),
  readOnlyWhy: z.string().min(1).optional(),
  network: z.object({
    enabled: z.boolean(),
    // host, host:port, *.domain or *; absent or empty = any endpoint when enabled, as an
    // empty allow list is in the session's network policy (contracts/network-policy.ts).
    allow: z.array(z.string().min(1)).optional(),
  }),
  processes: z.boolean(),
  ctypes: z.boolean(),
})
export type AuditPolicy = z.infer<typeof AuditPolicySchema>

// The absolute, symlink-free form of a path that may not exist yet.
export function resolvePath(p: string, depth = 0): string {
  const abs = resolve(p)
  try {
    return realpathSync.native(abs)
  } catch {
    if (depth > 40 || abs === '/') return abs
    const parent = resolvePath(dirname(abs), depth + 1)
    const candidate = join(parent, basename(abs))
    try {
      if (lstatSync(candidate).isSymbolicLink()) {
        const target = readlinkSync(candidate)
        return resolvePath(isAbsolute(target) ? target : join(parent, target), depth + 1)
      }
    } catch {}
    return candidate
  }
}

function under(path: string, root: string): boolean {
  return root === '/' || path === root || path.startsWith(root + '/')
}

export function normalizePolicy(policy: AuditPolicy): AuditPolicy {
  const p = AuditPolicySchema.parse(policy)
  const { allow, ...network } = p.network
  return {
    ...p,
    readOnly: p.readOnly.map((x) => resolvePath(x)),
    readWrite: p.readWrite.map((x) => resolvePath(x)),
    ...(p.readOnlyRoots ? { readOnlyRoots: p.readOnlyRoots.map((x) => resolvePath(x)) } : {}),
    // The hook itself reads an empty array as "nothing": it never gets one.
    network: allow?.length ? { ...network, allow } : network,
  }
}

// Why `next` would grant something `prev` does not, or undefined when it only tightens.
export function loosening(prev: AuditPolicy, next: AuditPolicy): string | undefined {
  for (const rw of next.readWrite) {
    if (!prev.readWrite.some((r) => under(rw, r))) return `read-write ${rw} is not inside a read-write root`
  }
  for (const ro of next.readOnly) {
    if (![...prev.readOnly, ...prev.readWrite].some((r) => under(ro, r)))
      return `read-only ${ro} is not readable now`
  }
  if (next.network.enabled) {
    if (!prev.network.enabled) return 'network is disabled'
    if (prev.network.allow) {
      if (!next.network.allow) return 'network is limited to an allow list'
      const extra = next.network.allow.find(
        (a) => !prev.network.allow!.includes(a) && !prev.network.allow!.includes('*'),
      )
      if (extra) return `network endpoint ${extra} is not in the allow list`
    }
  }
  if (next.processes && !prev.processes) return 'processes are disabled'
  if (next.ctypes && !prev.ctypes) return 'ctypes is disabled'
  return undefined
}

export function checkTightens(prev: AuditPolicy | undefined, next: AuditPolicy): void {
  if (!prev) return
  const why = loosening(prev, next)
  if (why) {
    throw new VisError('native.policy-loosen', `installPolicy() can only tighten the policy: ${why}`, {})
  }
}
