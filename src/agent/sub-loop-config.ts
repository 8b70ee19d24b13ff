import { z } from 'zod'

// agent.json's "subLoops": the bounds of sub_loop children (sub-loop.ts). Apart from it, so
// reading agent.json does not load the sub-loop machinery (vis run's start-up path).
export const SubLoopConfigSchema = z
  .object({
    concurrency: z.number().int().min(1).max(64).default(4),
    timeoutMs: z
      .number()
      .int()
      .min(1000)
      .default(10 * 60_000),
    maxDepth: z.number().int().min(1).max(8).default(2),
  })
  .strict()
export type SubLoopConfig = z.infer<typeof SubLoopConfigSchema>
