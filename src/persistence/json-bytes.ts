// What a page of a session weighs as it is sent: JSON, in UTF-8. A bound in characters is not one
// in bytes there: a control character the sandbox printed is six bytes (`\u0001`), a character
// past U+07FF three (sixteenth outsider pass: 720 blocks within the 65 536-character field bound
// made `?limit=1000` of the session view past V8's longest string, and one MCP transcript read of
// 50 such blocks was 37 MiB of JSON-RPC).

// The most a page of a session's blocks (the session view, GET /v1/sessions/{id}; a transcript
// resource, MCP) holds of its blocks' fields, measured by jsonBytes: blocks are listed, newest
// first, until the next would pass it, and the answer says how many earlier blocks there are, so
// a client pages on. A block's attachments count too (blocks.ts ATTACHMENT_BYTES). Ordinary
// blocks (a few KB) fill `?limit=1000` well within it; one block at the field bound (five fields
// of 65 536 control characters, and its display) is ~2.3 MiB and always fits. The newest block is
// listed whatever it weighs: with 1000 attachments of the longest names (1000 control characters)
// and media types it is ~10 MiB, within MCP's 16 MiB answer.
export const SESSION_PAGE_BYTES = 4 * 2 ** 20

// The bytes of JSON.stringify(text) in UTF-8, counted without building it (the JSON of a field
// of control characters is six times the field).
export function jsonBytes(text: string): number {
  let n = 2 // the quotes
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22 || c === 0x5c) n += 2
    else if (c < 0x20) n += c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6
    else if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1)
      // A pair is one 4-byte character; a lone surrogate JSON.stringify escapes (`\ud800`).
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4
        i++
      } else n += 6
    } else if (c >= 0xdc00 && c <= 0xdfff) n += 6
    else n += 3
  }
  return n
}

// The bytes of a value's JSON in UTF-8 (built: only for a value already clipped to a bound).
export function jsonValueBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null')
}

// One page of a list the server answers whole (the turns, the sessions, the approvals, the
// journal, a turn's children): items are taken in the order given (newest first, for a list
// that pages backwards) while their JSON stays within `maxBytes`, the first always (so a page
// always moves on; each caller bounds one item below the page). The items are pulled one at a
// time, so a list past the bound is never built whole (eighteenth outsider pass: six turns of
// model text made one 68 MiB answer, 36 sessions of 1 MiB policies a 34 MiB one). `full`: an
// item was left out for want of room.
export function fitBytes<T>(
  items: Iterable<T>,
  maxBytes: number,
  weigh: (item: T) => number = jsonValueBytes,
): { items: T[]; bytes: number; full: boolean } {
  const out: T[] = []
  let bytes = 0
  for (const item of items) {
    const w = weigh(item)
    if (out.length > 0 && bytes + w > maxBytes) return { items: out, bytes, full: true }
    bytes += w
    out.push(item)
  }
  return { items: out, bytes, full: false }
}

// A text cut to `max` characters (never inside a surrogate pair), as a page shows it.
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text
  const end = text.charCodeAt(max - 1) >= 0xd800 && text.charCodeAt(max - 1) <= 0xdbff ? max - 1 : max
  return text.slice(0, end)
}
