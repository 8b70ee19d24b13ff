import { z } from 'zod'
import { SurvivedSchema } from './survived.js'

// What one block returns (the guest runtime produces it; the host adds `timedOut`).
export const BlockError = z
  .object({
    phase: z.string(),
    message: z.string(),
    line: z.number().int().optional(),
    column: z.number().int().optional(),
    excerpt: z.string().optional(),
    flags: z.unknown().optional(),
  })
  .passthrough()
export type BlockError = z.infer<typeof BlockError>

export const BlockOutcome = z
  .object({
    stdout: z.string().optional(),
    result: z.unknown().optional(),
    error: BlockError.optional(),
    attachments: z.array(z.unknown()).optional(),
    snapshot: z.unknown().optional(),
    timedOut: z.boolean().optional(),
    // Set by the host after an interrupt, timeout or worker replacement (issue 13).
    survived: SurvivedSchema.optional(),
    workerReplaced: z.boolean().optional(),
    // The guest's list of the session's own names (the host keeps it, callers never see it).
    names: z.unknown().optional(),
    // The guest's working directory after the block (kept host-side, for a replacement).
    cwd: z.unknown().optional(),
  })
  .passthrough()
export type BlockOutcome = z.infer<typeof BlockOutcome>

// The guest reports an interrupt it saw; when the host's own timer caused it, the
// model is told it was a timeout.
export function asTimeout(outcome: BlockOutcome, timeoutMs: number, note?: string): BlockOutcome {
  const message = `the block ran past its ${timeoutMs} ms limit and was stopped${note ? `; ${note}` : ''}`
  return { ...outcome, error: { ...(outcome.error ?? {}), phase: 'timeout', message }, timedOut: true }
}
