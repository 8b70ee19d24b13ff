import { z } from 'zod'

// The run-block op's two halves: what the host asks the guest runtime to run and what the
// guest answers. The guest's Python reads and writes exactly these keys
// (vis-guest/vis_worker/ops.py, vis-guest/vis_guest/block.py); test/protocol/guest-wire.test.ts
// checks that against the keys below, so a field renamed here and not there fails a test.

// Snake_case throughout: the same keys are Python's.
export const RunBlockRequest = z
  .object({
    code: z.string(),
    // The guest runtime's own cut of what the block prints (the host's OutputBudget holds
    // the line behind it); unset, the runtime's configured or default cap.
    stdout_cap: z.number().int().min(0).optional(),
    // The host's context, rebound as the guest's `session` dict before the block (with
    // `survived` when the last block was stopped). One name on every side.
    session: z.record(z.unknown()).optional(),
    // The block's whole sys.stdin (end of input after it).
    stdin: z.string().optional(),
  })
  .strict()
export type RunBlockRequest = z.infer<typeof RunBlockRequest>

// A block's error as the guest reports it: `phase` says where it failed (syntax, runtime,
// interrupted, empty-block...); the guest adds more keys (flags, hints), kept as they are.
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

// The guest's answer. Keys the guest does not know are dropped, never handed on.
export const GuestBlockOutcome = z.object({
  // What the block printed, stdout and stderr interleaved as a terminal shows them.
  stdout: z.string().optional(),
  // The value of the block's last expression, when it printed nothing. The host holds it, `value`
  // and `error` each to the block's output cap as JSON text (src/sessions/value-cap.ts): past it a
  // value becomes {vis_truncated: true, type, chars, cap, preview}, an error's text is cut with a
  // `[truncated by the host: ...]` marker.
  result: z.unknown().optional(),
  // The value of the block's last expression when it also printed (then `result` is absent):
  // shown after the output in what a model reads, as a notebook shows it.
  value: z.unknown().optional(),
  error: BlockError.optional(),
  // Files the block attached (vis_guest/attach.py: name, media_type, data_b64).
  attachments: z.array(z.unknown()).optional(),
  // Host-side state, each only when it changed since the worker last reported it: the
  // definitions snapshot (for a replacement worker), the session's own names, the cwd.
  snapshot: z.unknown().optional(),
  names: z.unknown().optional(),
  cwd: z.unknown().optional(),
})
export type GuestBlockOutcome = z.infer<typeof GuestBlockOutcome>

// Keys of GuestBlockOutcome whose check is a plain type test (stdout) or none at all.
const PLAIN_KEYS: Record<string, 'string' | 'any'> = {
  stdout: 'string',
  result: 'any',
  value: 'any',
  snapshot: 'any',
  names: 'any',
  cwd: 'any',
}

// GuestBlockOutcome.safeParse with a fast path: nearly every outcome is `{}`, `{stdout}` or
// `{result}` (plus the state the guest reports when it changed), which the schema accepts as
// they are; those are checked here in a few comparisons, and anything else (an error,
// attachments, an unknown key, a wrong type) goes through the schema for its precise verdict.
export function parseGuestOutcome(value: unknown): z.SafeParseReturnType<unknown, GuestBlockOutcome> {
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
      return { success: true, data: value as GuestBlockOutcome }
    }
  }
  return GuestBlockOutcome.safeParse(value)
}
