import { isAbsolute } from 'node:path'
import { z } from 'zod'
import { NetworkPolicySchema } from './network-policy.js'

const AbsolutePath = z.string().refine((p) => isAbsolute(p), { message: 'must be an absolute path' })

// The policy a worker's jail is built from, one definition that the confinement layer (the jail,
// the egress proxy), the wire (src/protocol) and the layers above it all import; every other form
// (jail mounts, proxy rules, the native hook's policy) is derived from it. The network part is
// network-policy.ts beside it.
export { NetworkPolicySchema } from './network-policy.js'

export const LimitsSchema = z.object({
  memoryMb: z.number().int().min(64).default(1024),
  processes: z.number().int().min(16).default(128),
  openFiles: z.number().int().min(32).default(256),
  // Per file written (RLIMIT_FSIZE, the worker's log included) and the /tmp tmpfs. Always
  // set: without it a guest could fill the host's disk through its own log file.
  diskMb: z.number().int().positive().default(1024),
  // How much the session's roots may grow (allocated blocks, since the session started),
  // measured by the host (src/sessions/disk-budget.ts): past it the block is interrupted and
  // writes are refused until files are deleted.
  diskBudgetMb: z.number().int().positive().default(1024),
  // Per block, enforced by the host: past it the worker tree is SIGKILLed.
  wallClockMs: z.number().int().positive().default(300_000),
  // Captured output per block, enforced by the host whatever the guest runtime does.
  outputBytes: z
    .number()
    .int()
    .min(1024)
    .default(1 << 20),
})

// A draft: `root` (one of the roots) is shown as an overlay, `lower` read-only below (the
// real root, or an empty directory for a blank draft) and `upper` above; `dir` holds upper
// and the per-mount work directories and is hidden from the sandbox once mounted.
export const OverlaySchema = z.object({
  root: AbsolutePath,
  lower: AbsolutePath,
  upper: AbsolutePath,
  dir: AbsolutePath,
  // A blank draft's host places inside the root (the vis-runtime package, its node_modules, a
  // distribution the host runs), real paths: shown from the real root over the empty view, as
  // the jail binds each read-only and needs it there.
  keep: z.array(AbsolutePath).optional(),
})

// Fixed when the worker is spawned; a warm pool is keyed by it.
export const ConfinementPolicySchema = z.object({
  // The client's roots: opened, checked and mounted from fds by root-guard.ts.
  roots: z.array(AbsolutePath).default([]),
  // Directories every root must resolve beneath (root-guard.ts); unset: anywhere allowed.
  within: z.array(AbsolutePath).optional(),
  // Each root's identity when its session was created (root-guard.ts rootIdentity): a root
  // whose path names another directory now is refused (policy.root-changed).
  pins: z.record(z.string(), z.string()).optional(),
  // The host's own directories the sandbox writes (a worker's outbox), mounted like roots after
  // them but never checked as roots: they lie in the vis home, which no root may.
  writable: z.array(AbsolutePath).default([]),
  readOnly: z.array(AbsolutePath).default([]),
  // Roots shown read-only (a read-only session; the roots besides a review's draft): bound
  // read-only and given Landlock read rights only, so a write fails with EROFS/EACCES.
  readOnlyRoots: z.array(AbsolutePath).default([]),
  // Directories inside the roots masked by an empty read-only tmpfs (extension directories).
  hidden: z.array(AbsolutePath).default([]),
  network: NetworkPolicySchema.default({}),
  shell: z.boolean().default(false),
  limits: LimitsSchema.default({}),
  overlay: OverlaySchema.optional(),
  // Host folders bound read-only at another path (`target`), inside the mount namespace only;
  // `pin`: the folder's identity when found, checked at each spawn (mount-pins.ts).
  mounts: z
    .array(z.object({ source: AbsolutePath, target: AbsolutePath, pin: z.string().optional() }))
    .default([]),
})

export type ConfinementPolicy = z.infer<typeof ConfinementPolicySchema>
export type ConfinementPolicyInput = z.input<typeof ConfinementPolicySchema>
export type NetworkPolicy = z.infer<typeof NetworkPolicySchema>
export type Limits = z.infer<typeof LimitsSchema>
export type Overlay = z.infer<typeof OverlaySchema>
