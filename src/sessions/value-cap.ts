import type { BlockError } from '../protocol/run-block.js'

// A block's `result`, `value` and `error` come from the guest, which is not a boundary: held
// only by the wire's frame (16 MiB), each would be stored in the block's row, sent in its
// `block.finished` event to every listener and handed to the model or MCP client whole. The
// host holds each to the block's output cap (the characters OutputBudget allows what the block
// prints), measured as JSON text, before any of that happens.

// What a client sees in place of a value past the cap: a typed marker, so a cut value is never
// mistaken for one the block returned. `chars` is the length of the value's JSON text.
export interface TruncatedValue {
  vis_truncated: true
  type: 'string' | 'array' | 'object' | 'number' | 'boolean' | 'null'
  chars: number
  cap: number
  // The start of the value (a string's own text, else its JSON text).
  preview: string
}

// The preview is a glimpse, not the value: long enough to recognise it, short enough that a
// reply carrying several markers stays small.
const PREVIEW_CHARS = 4096
// A cut error field keeps this much room for its marker.
const MARKER_ROOM = 200

// The longest JSON text of a finite double ("-1.2345678901234567e-308").
const NUMBER_MAX_CHARS = 24

// Deeper than any value the guest's encoder makes (Python's recursion limit stops it first), and
// shallow enough for V8's JSON.stringify, which recurses: the host parses a deeper value from a
// forged frame but could not serialise it again to store or send it.
const MAX_DEPTH = 1000

// An upper bound of the length of v's JSON text, Infinity once it passes `limit`, or -1 when it
// nests past MAX_DEPTH: each string counted as if every character were a 6-character escape, each
// number at its longest. Walked with a stack of its own, so a deep value cannot overflow the host's.
function upperBound(v: unknown, limit: number): number {
  let total = 0
  const todo: unknown[] = [v]
  const depths: number[] = [0]
  while (todo.length > 0) {
    const x = todo.pop()
    const depth = depths.pop() ?? 0
    if (typeof x === 'string') total += x.length * 6 + 2
    else if (typeof x === 'number') total += NUMBER_MAX_CHARS
    else if (typeof x === 'boolean' || x === null) total += 5
    else if (typeof x === 'object') {
      if (depth >= MAX_DEPTH) return -1
      total += 2
      if (Array.isArray(x)) {
        total += x.length
        for (const item of x) {
          todo.push(item)
          depths.push(depth + 1)
        }
      } else {
        for (const key in x) {
          total += key.length * 6 + 4
          todo.push((x as Record<string, unknown>)[key])
          depths.push(depth + 1)
        }
      }
    }
    if (total > limit) return Number.POSITIVE_INFINITY
  }
  return total
}

// The exact length of v's JSON text (Infinity when V8 cannot serialise it, e.g. nested too deep).
function exactChars(v: unknown): number {
  try {
    return JSON.stringify(v)?.length ?? 0
  } catch {
    return Number.POSITIVE_INFINITY
  }
}

// The length of v's JSON text when it is at most `limit`, else some number above `limit`. An
// ordinary value is judged by its upper bound alone, with no serialisation; only one near or
// past the limit is serialised.
export function jsonChars(v: unknown, limit: number): number {
  if (v === undefined) return 0
  if (typeof v === 'string' && v.length + 2 > limit) return v.length + 2
  const bound = upperBound(v, limit)
  // Too deep never fits, whatever its length (exactChars is Infinity for what V8 cannot serialise).
  if (bound < 0) return Number.POSITIVE_INFINITY
  return bound <= limit ? bound : exactChars(v)
}

function jsonType(v: unknown): TruncatedValue['type'] {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  const t = typeof v
  return t === 'string' || t === 'number' || t === 'boolean' ? t : 'object'
}

// The start of a string, no longer than `room` characters as JSON text.
function head(text: string, room: number): string {
  let cut = text.slice(0, Math.max(room - 2, 0))
  while (cut.length > 0 && JSON.stringify(cut).length > room) cut = cut.slice(0, cut.length >> 1)
  return cut
}

export function truncatedValue(v: unknown, chars: number, capChars: number): TruncatedValue {
  let text = ''
  try {
    text = typeof v === 'string' ? v : (JSON.stringify(v) ?? '')
  } catch {
    // Nested past what V8 serialises: the marker says its type, with no preview.
  }
  const room = Math.min(PREVIEW_CHARS, Math.max(capChars - MARKER_ROOM, 0))
  return { vis_truncated: true, type: jsonType(v), chars, cap: capChars, preview: head(text, room) }
}

// A value no longer than the cap as JSON text is kept as it is; a longer one becomes its marker.
export function capValue(v: unknown, capChars: number): unknown {
  const chars = jsonChars(v, capChars)
  if (chars <= capChars) return v
  return truncatedValue(v, typeof v === 'string' ? exactChars(v) : chars, capChars)
}

function cutText(text: string, room: number, capChars: number): string {
  const marker = `\n[truncated by the host: ${text.length} characters in all (cap ${capChars} characters)]`
  return head(text, Math.max(room - marker.length, 0)) + marker
}

// An error keeps its shape (phase, message, position, the guest's extra keys) within the cap:
// its fields are taken in order while they fit; a string that does not is cut with a visible
// marker, any other value becomes a typed marker, and once no room is left the remaining
// extra keys are dropped (their count is kept in `truncated_keys`).
export function capError(error: BlockError, capChars: number): BlockError {
  if (jsonChars(error, capChars) <= capChars) return error
  const order = ['phase', 'message', 'line', 'column', 'excerpt']
  const keys = [...order.filter((k) => k in error), ...Object.keys(error).filter((k) => !order.includes(k))]
  const out: Record<string, unknown> = {}
  let room = capChars - MARKER_ROOM
  let dropped = 0
  for (const key of keys) {
    const v = (error as Record<string, unknown>)[key]
    const need = key.length + 4
    const size = jsonChars(v, Math.max(room - need, 0))
    if (size + need <= room) {
      out[key] = v
      room -= size + need
    } else if (typeof v === 'string' && (key === 'phase' || key === 'message' || room > need + MARKER_ROOM)) {
      out[key] = cutText(v, Math.max(room - need, 0), capChars)
      room -= jsonChars(out[key], capChars) + need
    } else if (room > need + MARKER_ROOM) {
      out[key] = truncatedValue(v, exactChars(v), capChars)
      room -= jsonChars(out[key], capChars) + need
    } else dropped++
  }
  if (dropped > 0) out.truncated_keys = dropped
  return out as BlockError
}

// The outcome with its result, value and error each held to the cap (everything else as it is).
export function capOutcomeValues<T extends { result?: unknown; value?: unknown; error?: BlockError }>(
  outcome: T,
  capChars: number,
): T {
  let out = outcome
  if (outcome.result !== undefined) {
    const result = capValue(outcome.result, capChars)
    if (result !== outcome.result) out = { ...out, result }
  }
  if (outcome.value !== undefined) {
    const value = capValue(outcome.value, capChars)
    if (value !== outcome.value) out = { ...out, value }
  }
  if (outcome.error !== undefined) {
    const error = capError(outcome.error, capChars)
    if (error !== outcome.error) out = { ...out, error }
  }
  return out
}
