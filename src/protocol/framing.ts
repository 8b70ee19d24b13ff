// Line framing: one JSON document per '\n'-terminated line. JSON.stringify never emits
// a raw newline, so a newline always ends a frame.

export const DEFAULT_MAX_FRAME_CHARS = 16 * 1024 * 1024
export const DEFAULT_MAX_DEPTH = 64

export type FrameEvent =
  | { kind: 'line'; line: string }
  // A frame that passed the cap: its body is discarded up to the next newline; `head` is
  // its first characters so the reader can still name the request it answered.
  | { kind: 'oversized'; head: string; chars: number }

export class LineDecoder {
  private buf = ''
  private dropping = false
  private droppedHead = ''
  private droppedChars = 0

  constructor(private readonly maxChars: number = DEFAULT_MAX_FRAME_CHARS) {}

  push(chunk: string, emit: (ev: FrameEvent) => void): void {
    let start = 0
    for (;;) {
      const nl = chunk.indexOf('\n', start)
      if (nl === -1) break
      const piece = chunk.slice(start, nl)
      start = nl + 1
      if (this.dropping) {
        const chars = this.droppedChars + piece.length
        const head = this.droppedHead
        this.dropping = false
        this.droppedHead = ''
        this.droppedChars = 0
        emit({ kind: 'oversized', head, chars })
        continue
      }
      const line = this.buf.length > 0 ? this.buf + piece : piece
      this.buf = ''
      if (line.length > this.maxChars)
        emit({ kind: 'oversized', head: line.slice(0, 64), chars: line.length })
      else if (line.length > 0) emit({ kind: 'line', line })
    }
    const rest = start === 0 ? chunk : chunk.slice(start)
    if (rest.length === 0) return
    if (this.dropping) {
      this.droppedChars += rest.length
      return
    }
    this.buf += rest
    if (this.buf.length > this.maxChars) {
      this.dropping = true
      this.droppedHead = this.buf.slice(0, 64)
      this.droppedChars = this.buf.length
      this.buf = ''
    }
  }
}

// Walks a parsed document without recursion and answers whether it nests deeper than
// `max` containers. Big strings cost nothing here: only objects and arrays are visited.
export function exceedsDepth(value: unknown, max: number = DEFAULT_MAX_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false
  const stack: Array<[unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [v, d] = stack.pop()!
    if (d > max) return true
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === 'object') stack.push([x, d + 1])
    } else {
      for (const k in v as Record<string, unknown>) {
        const x = (v as Record<string, unknown>)[k]
        if (x !== null && typeof x === 'object') stack.push([x, d + 1])
      }
    }
  }
  return false
}

// The id of the reply an oversized frame carried, when its head shows one.
export function replyIdFromHead(head: string): number | undefined {
  const m = /^\{"id":(\d{1,15}),"ok":/.exec(head)
  return m ? Number(m[1]) : undefined
}

export function encodeFrame(msg: unknown): string {
  return JSON.stringify(msg) + '\n'
}

// JSON text produced elsewhere (Python's json.dumps never emits a raw newline), spliced
// into a frame as is instead of being parsed and serialised again.
export class RawJson {
  constructor(readonly text: string) {}
}

// Encodes a flat message whose top-level values may be RawJson.
export function encodeFrameWithRaw(msg: Record<string, unknown>): string {
  let out = '{'
  let first = true
  for (const [k, v] of Object.entries(msg)) {
    if (v === undefined) continue
    out += `${first ? '' : ','}${JSON.stringify(k)}:${v instanceof RawJson ? v.text : JSON.stringify(v)}`
    first = false
  }
  return `${out}}\n`
}
