import { resolve } from 'node:path'
import { z } from 'zod'
import {
  entryKey,
  entryText,
  type NetworkEntry,
  NetworkPolicySchema,
  sortedEntries,
} from '../confinement/egress/policy.js'
import { LimitsSchema, OverlaySchema } from '../confinement/policy.js'

// Everything that must be fixed when a worker is spawned: the OS jail is built from it,
// so two sessions may share a warm worker only if their policies are equal.
// The one network policy definition (entries, per-host rules), see egress/policy.ts.
export const NetworkPolicy = NetworkPolicySchema

export const WorkerPolicy = z
  .object({
    roots: z.array(z.string().min(1)).default([]),
    // Directories every root must resolve beneath, checked at each spawn on what the root's
    // path names then (src/confinement/root-guard.ts): the operator's allow-list for API
    // clients, an MCP server's own roots. Unset: anywhere the other root rules allow.
    within: z.array(z.string().min(1)).optional(),
    // What each root was when the session was created (device:inode by root path), checked at
    // every jail: a root moved away or swapped for a link is refused (policy.root-changed).
    pins: z.record(z.string(), z.string()).optional(),
    network: NetworkPolicy.default({}),
    shell: z.boolean().default(false),
    // Resource limits of the jail (memory, processes, files, disk, wall clock, output);
    // unset fields take the confinement defaults published in SECURITY.md.
    limits: LimitsSchema.partial().strict().optional(),
    // Directories inside the roots the sandbox must neither read nor write (the extension
    // directories: code written there would run unconfined). The jail masks each one.
    hidden: z.array(z.string().min(1)).optional(),
    // The session is in a draft: its primary root is shown as this overlay (src/drafts).
    overlay: OverlaySchema.strict().optional(),
    // Host folders shown read-only at a fixed path in the jail (skills outside the roots,
    // src/agent/skills): `source` is a real path outside every root, `target` where it appears.
    mounts: z.array(z.object({ source: z.string().min(1), target: z.string().min(1) }).strict()).optional(),
  })
  .strict()
export type WorkerPolicy = z.infer<typeof WorkerPolicy>
export type WorkerPolicyInput = z.input<typeof WorkerPolicy>

export function normalizePolicy(input: WorkerPolicyInput): WorkerPolicy {
  const p = WorkerPolicy.parse(input)
  return {
    roots: [...new Set(p.roots.map((r) => resolve(r)))].sort(),
    ...(p.within ? { within: [...new Set(p.within.map((w) => resolve(w)))].sort() } : {}),
    ...(p.pins
      ? { pins: Object.fromEntries(Object.entries(p.pins).sort(([a], [b]) => (a < b ? -1 : 1))) }
      : {}),
    network: {
      enabled: p.network.enabled,
      allow: sortedEntries(p.network.allow),
      deny: sortedEntries(p.network.deny),
    },
    shell: p.shell,
    ...(p.limits ? { limits: p.limits } : {}),
    ...(p.hidden?.length ? { hidden: [...new Set(p.hidden.map((h) => resolve(h)))].sort() } : {}),
    ...(p.overlay ? { overlay: p.overlay } : {}),
    ...(p.mounts?.length ? { mounts: [...p.mounts].sort((a, b) => (a.target < b.target ? -1 : 1)) } : {}),
  }
}

// A stable key for the pool: equal policies (after normalisation) give equal keys.
export function policyKey(policy: WorkerPolicy, python: string | undefined): string {
  const limits = LimitsSchema.parse(policy.limits ?? {})
  return JSON.stringify([
    python ?? '',
    policy.roots,
    policy.within ?? null,
    policy.pins ?? null,
    policy.network,
    policy.shell,
    limits,
    policy.hidden ?? [],
    policy.overlay ?? null,
    policy.mounts ?? [],
  ])
}

// Why changing a session's network from `cur` to `next` would loosen it (undefined when
// it only tightens). `next.allow` unset keeps the current list; an empty list means any.
export function networkLoosening(
  cur: WorkerPolicy['network'],
  next: { enabled: boolean; allow?: NetworkEntry[] },
): string | undefined {
  if (!next.enabled) return undefined
  if (!cur.enabled) return 'network is off in this session'
  if (next.allow === undefined || cur.allow.length === 0 || cur.allow.includes('*')) return undefined
  const shown = cur.allow.map(entryText).join(', ')
  if (next.allow.length === 0) return `network is limited to ${shown}`
  const have = new Set(cur.allow.map(entryKey))
  const extra = next.allow.find((a) => !have.has(entryKey(a)))
  return extra === undefined ? undefined : `${entryText(extra)} is not in the session's allow list (${shown})`
}
