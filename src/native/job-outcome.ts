import { z } from 'zod'

// What a job hands back: success, or the raised exception with the guest's line/column.
export const FrameSchema = z.object({ file: z.string(), line: z.number().int(), name: z.string() })

export const PythonErrorSchema = z.object({
  type: z.string(),
  message: z.string(),
  traceback: z.array(FrameSchema),
  line: z.number().int().optional(),
  column: z.number().int().optional(),
  filename: z.string().optional(),
  // SystemExit only: the status python3 would exit with.
  exitCode: z.number().int().optional(),
  // traceback.format_exception() text, as python3 would print it.
  formatted: z.string().optional(),
})

export const OutcomeSchema = z.discriminatedUnion('ok', [
  z.object({
    job: z.number().int().positive(),
    ok: z.literal(true),
    // eval: the value as JSON when it is JSON-able, else its repr() (and repr: true).
    // call: the JSON text of the result.
    value: z.unknown().optional(),
    repr: z.boolean().optional(),
  }),
  z.object({ job: z.number().int().positive(), ok: z.literal(false), error: PythonErrorSchema }),
])

export type Frame = z.infer<typeof FrameSchema>
export type PythonError = z.infer<typeof PythonErrorSchema>
export type Outcome = z.infer<typeof OutcomeSchema>

// The envelope a host call's reply must be (what _vis.host_wait returns to Python).
export const HostReplySchema = z.union([
  z.object({ ok: z.literal(true), value: z.unknown() }),
  z.object({
    ok: z.literal(false),
    error: z.object({ code: z.string(), message: z.string() }).passthrough(),
  }),
])
export type HostReply = z.infer<typeof HostReplySchema>
