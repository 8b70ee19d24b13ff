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

// Keys of the common outcome whose schema is a plain type check (stdout) or none at all.
const PLAIN_KEYS: Record<string, 'string' | 'any'> = {
  stdout: 'string',
  result: 'any',
  snapshot: 'any',
  names: 'any',
  cwd: 'any',
}

// BlockOutcome.safeParse with a fast path: nearly every outcome is `{}`, `{stdout}` or
// `{result}` (plus the state the guest reports when it changed), which BlockOutcome accepts
// as they are; those are checked here in a few comparisons, and anything else (an error,
// attachments, an unknown key, a wrong type) goes through the schema for its precise verdict.
export function parseBlockOutcome(value: unknown): z.SafeParseReturnType<unknown, BlockOutcome> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    let plain = true
    for (const key in value) {
      const want = Object.hasOwn(PLAIN_KEYS, key) ? PLAIN_KEYS[key] : undefined
      const v = (value as Record<string, unknown>)[key]
      if (want === undefined || v === undefined || (want === 'string' && typeof v !== 'string')) {
        plain = false
        break
      }
    }
    if (plain && Object.getPrototypeOf(value) === Object.prototype) {
      return { success: true, data: value as BlockOutcome }
    }
  }
  return BlockOutcome.safeParse(value)
}

// The guest reports an interrupt it saw; when the host's own timer caused it, the
// model is told it was a timeout.
export function asTimeout(outcome: BlockOutcome, timeoutMs: number, note?: string): BlockOutcome {
  const message = `the block ran past its ${timeoutMs} ms limit and was stopped${note ? `; ${note}` : ''}`
  return { ...outcome, error: { ...(outcome.error ?? {}), phase: 'timeout', message }, timedOut: true }
}
