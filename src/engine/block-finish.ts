import { z } from 'zod'
import type { AttachmentInput, FinishBlockInput } from '../persistence/index.js'
import { isJsonValue, type JsonValue, JsonValueSchema } from '../persistence/json.js'
import type { BlockResult } from '../sessions/block-result.js'
import { survivedWire } from '../sessions/survived.js'
import { errorMessage, isVisError } from '../util/errors.js'
import { isOutboxBytes } from './outbox-files.js'

// What the guest hands over for a file a block attached (vis-guest/vis_guest/attach.py).
const GuestAttachmentSchema = z
  .object({
    name: z.string(),
    media_type: z.string(),
    data_b64: z.string(),
  })
  .passthrough()

export type OutcomeLimits = {
  // Stored output beyond this many characters is cut, with a note saying so.
  maxOutputChars: number
}

// The marker an earlier cut leaves at the end (the guest's capture, the session's budget):
// it counts what that cut dropped, often far more than the few characters it adds.
const EARLIER_CUT =
  /\n\[output truncated(?: by the host)?: \d+ more (?:bytes|characters) not shown[^\]\n]*\]\n$/

export function capText(text: string, max: number): string {
  if (text.length <= max) return text
  // An earlier cut's marker is kept (cutting it off would hide how much was lost, and the
  // note would count only its own length): this cut comes out of the text before it.
  const earlier = EARLIER_CUT.exec(text)
  const tail = earlier ? earlier[0] : ''
  const body = earlier ? text.slice(0, earlier.index) : text
  const keep = Math.max(0, max - tail.length)
  return `${body.slice(0, keep)}\n[vis: output truncated, ${body.length - keep} more characters not kept]\n${tail.slice(1)}`
}

const asJson = (value: unknown): JsonValue | null => {
  if (value === undefined) return null
  // The plain walk first (the schema's answer for any JSON value); zod only for the rest.
  if (isJsonValue(value)) return value as JsonValue
  const parsed = JsonValueSchema.safeParse(value)
  return parsed.success ? parsed.data : String(value)
}

// The guest's error carries a `phase` (syntax, runtime, interrupted, timeout...); the stored
// error gets a stable dotted code from it and keeps every field the guest sent.
function blockError(error: NonNullable<BlockResult['error']>): FinishBlockInput['error'] {
  const { phase, message, ...rest } = error
  const extra: Record<string, JsonValue> = {}
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) extra[k] = asJson(v)
  // The stored schema keeps extra keys (catchall) though its input type does not spell them out.
  return { ...extra, code: `block.${phase}`, phase, message } as NonNullable<FinishBlockInput['error']>
}

const mediaTypeOf = (t: unknown): string =>
  typeof t === 'string' && /^[\w.+-]+\/[\w.+-]+/.test(t) ? t : 'application/octet-stream'

function attachmentInputs(list: unknown[] | undefined): { inputs: AttachmentInput[]; notes: string[] } {
  const inputs: AttachmentInput[] = []
  const notes: string[] = []
  for (const [i, raw] of (list ?? []).entries()) {
    const unreadable = (raw as { unreadable?: unknown } | null)?.unreadable
    if (typeof unreadable === 'string') {
      notes.push(`${(raw as { name: string }).name} from the outbox was not kept: ${unreadable}`)
      continue
    }
    if (isOutboxBytes(raw)) {
      inputs.push({ mediaType: mediaTypeOf(raw.media_type), name: raw.name, data: raw.bytes })
      continue
    }
    const a = GuestAttachmentSchema.safeParse(raw)
    if (!a.success) {
      notes.push(`attachment ${i} was malformed and not kept`)
      continue
    }
    inputs.push({
      mediaType: mediaTypeOf(a.data.media_type),
      name: a.data.name,
      data: Buffer.from(a.data.data_b64, 'base64'),
    })
  }
  return { inputs, notes }
}

export function finishFromOutcome(outcome: BlockResult, durationMs: number, limits: OutcomeLimits) {
  const { inputs, notes } = attachmentInputs(outcome.attachments)
  let stdout = capText(outcome.stdout ?? '', limits.maxOutputChars)
  if (notes.length > 0) stdout += `[vis: ${notes.join('; ')}]\n`
  const finish: FinishBlockInput = {
    stdout,
    result: asJson(outcome.result),
    value: asJson(outcome.value),
    error: outcome.error ? blockError(outcome.error) : null,
    durationMs: Math.max(0, Math.round(durationMs)),
    timedOut: outcome.timedOut === true,
    // Stored as it crosses to Python and HTTP: snake_case.
    survived: outcome.survived === undefined ? null : asJson(survivedWire(outcome.survived)),
    attachments: inputs,
  }
  return finish
}

// A block whose worker failed under it (crashed, retired, the session closed) still finishes:
// with the output it printed so far and the reason.
export function finishFromFailure(
  err: unknown,
  partialStdout: string,
  durationMs: number,
  limits: OutcomeLimits,
) {
  const finish: FinishBlockInput = {
    stdout: capText(partialStdout, limits.maxOutputChars),
    error: {
      code: isVisError(err) ? err.code : 'block.failed',
      message: errorMessage(err),
    },
    durationMs: Math.max(0, Math.round(durationMs)),
    timedOut: false,
  }
  return finish
}

export function outcomeLabel(f: FinishBlockInput): 'ok' | 'error' | 'timeout' {
  return f.timedOut ? 'timeout' : f.error ? 'error' : 'ok'
}
