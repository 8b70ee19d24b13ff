import { resolve } from 'node:path'
import { z } from 'zod'
import {
  entryKey,
  entryText,
  narrowsHttp,
  parseEntry,
  refusesSome,
  sortedEntries,
} from '../confinement/egress/network-entries.js'
import { readOnlyRoots, SessionModeSchema } from '../confinement/modes.js'
import { type ConfinementPolicyInput, LimitsSchema, OverlaySchema } from '../contracts/jail-policy.js'
import { type NetworkEntry, type NetworkPolicy, NetworkPolicySchema } from '../contracts/network-policy.js'

// Everything that must be fixed when a worker is spawned: the OS jail is built from it,
// so two sessions may share a warm worker only if their policies are equal.
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
    // The one network policy definition (entries, per-host rules): src/contracts/network-policy.ts.
    network: NetworkPolicySchema.default({}),
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
    // src/agent/skills): `source` is a real path outside every root, `target` where it appears,
    // `pin` its identity when found (device:inode): every jail binds it from an fd checked
    // against the pin, so a folder swapped for a link is refused (confinement/mount-pins.ts).
    mounts: z
      .array(
        z
          .object({ source: z.string().min(1), target: z.string().min(1), pin: z.string().optional() })
          .strict(),
      )
      .optional(),
    // How the session may change its roots (confinement/modes.ts); unset: every root writable.
    mode: SessionModeSchema.optional(),
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
    ...(p.mode && p.mode !== 'workspace' ? { mode: p.mode } : {}),
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
    policy.mode ?? null,
  ])
}

// Why changing a session's network from `cur` to `next` would loosen it (undefined when
// it only tightens); the deny list stays (tightenedNetwork). `next.allow` unset keeps the
// current list. Judged in the evaluator's order: a specific allow beats a `*` deny and a
// rule narrowing HTTP, so only a list that grants everything by itself (empty or `*`, with
// neither of those) takes any new entry; otherwise the new list must be part of the
// current one, keeping every entry that refuses something ('none' and narrowing rules).
export function networkLoosening(
  cur: WorkerPolicy['network'],
  next: { enabled: boolean; allow?: NetworkEntry[] },
): string | undefined {
  if (!next.enabled) return undefined
  if (!cur.enabled) return 'network is off in this session'
  if (next.allow === undefined) return undefined
  const kept = new Set(next.allow.map(entryKey))
  const dropped = cur.allow.find((a) => refusesSome(a) && !kept.has(entryKey(a)))
  if (dropped) return `${entryText(dropped)} limits the session's network and must stay in its allow list`
  const anyDeny = cur.deny.some((d) => parseEntry(d)?.kind === 'any')
  const grantsAll = cur.allow.length === 0 || cur.allow.includes('*')
  if (grantsAll && !anyDeny && !cur.allow.some(narrowsHttp)) return undefined
  if (next.allow.length === 0 && cur.allow.length > 0) {
    return `network is limited to ${cur.allow.map(entryText).join(', ')}`
  }
  const have = new Set(cur.allow.map(entryKey))
  const extra = next.allow.find((a) => !have.has(entryKey(a)))
  if (extra === undefined) return undefined
  const shown = cur.allow.length
    ? cur.allow.map(entryText).join(', ')
    : "it is empty, and the deny list refuses '*'"
  return `${entryText(extra)} is not in the session's allow list (${shown})`
}

// The one mapping from a session's policy to the jail its processes run in: the session's
// worker (src/worker/spawn.ts), its tool processes and its tool network's holder
// (src/sessions/tool-jail.ts). Only what the host adds differs: the files each process
// needs read-only, the host directories it writes (a worker's outbox), and whether it may
// start processes (a tool jail always may: it runs a program).
export function jailPolicy(
  p: WorkerPolicy,
  host: { readOnly: string[]; writable?: string[]; shell?: boolean },
): ConfinementPolicyInput {
  return {
    // The workspace root stays first: it is the sandbox's home and working directory.
    roots: p.roots,
    ...(p.within ? { within: p.within } : {}),
    ...(p.pins ? { pins: p.pins } : {}),
    writable: host.writable ?? [],
    readOnly: host.readOnly,
    readOnlyRoots: readOnlyRoots(p),
    hidden: p.hidden ?? [],
    network: p.network,
    shell: host.shell ?? p.shell,
    limits: p.limits ?? {},
    ...(p.overlay ? { overlay: p.overlay } : {}),
    // Skills outside the roots, read-only where the worker sees them (src/skills).
    mounts: p.mounts ?? [],
  }
}

// The network after a tightening the worker accepted (`Session.setNetwork`): what the
// worker's audit hook, its egress proxy and the tool network's proxy all apply next. The
// deny list always stays; an allow list is kept only while the network is on.
export function tightenedNetwork(
  cur: NetworkPolicy,
  next: { enabled: boolean; allow?: NetworkEntry[] },
): NetworkPolicy {
  return { enabled: next.enabled, allow: next.enabled ? (next.allow ?? cur.allow) : [], deny: cur.deny }
}
