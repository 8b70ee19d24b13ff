import { resolve } from 'node:path'
import { z } from 'zod'

// Everything that must be fixed when a worker is spawned: the OS jail is built from it,
// so two sessions may share a warm worker only if their policies are equal.
export const NetworkPolicy = z
  .object({
    enabled: z.boolean().default(false),
    allow: z.array(z.string()).default([]),
    deny: z.array(z.string()).default([]),
  })
  .strict()

export const WorkerPolicy = z
  .object({
    roots: z.array(z.string().min(1)).default([]),
    network: NetworkPolicy.default({}),
    shell: z.boolean().default(false),
  })
  .strict()
export type WorkerPolicy = z.infer<typeof WorkerPolicy>
export type WorkerPolicyInput = z.input<typeof WorkerPolicy>

export function normalizePolicy(input: WorkerPolicyInput): WorkerPolicy {
  const p = WorkerPolicy.parse(input)
  return {
    roots: [...new Set(p.roots.map((r) => resolve(r)))].sort(),
    network: {
      enabled: p.network.enabled,
      allow: [...new Set(p.network.allow)].sort(),
      deny: [...new Set(p.network.deny)].sort(),
    },
    shell: p.shell,
  }
}

// A stable key for the pool: equal policies (after normalisation) give equal keys.
export function policyKey(policy: WorkerPolicy, python: string | undefined): string {
  return JSON.stringify([python ?? '', policy.roots, policy.network, policy.shell])
}
