import { createHash } from 'node:crypto'

// Anchors are `<lineno>:<hash>`; the hash addresses the line's content so an
// edit can prove the model saw the line it is changing.
const HASH_CHARS = 6

export function lineHash(text: string): string {
  return createHash('sha1').update(text).digest('hex').slice(0, HASH_CHARS)
}

export function anchorOf(lineno: number, text: string): string {
  return `${lineno}:${lineHash(text)}`
}

export function renderLine(lineno: number, text: string): string {
  return `${anchorOf(lineno, text)}|${text}`
}

export function parseAnchor(anchor: string): { line: number; hash: string } | undefined {
  const m = /^\s*(\d+):([0-9a-f]+)(?:\|.*)?$/s.exec(anchor)
  if (!m) return undefined
  return { line: Number(m[1]), hash: m[2]! }
}

export interface SplitText {
  lines: string[]
  eol: '\n' | '\r\n'
  // Whether the text ends with a line break (so the last line is complete).
  finalEol: boolean
}

// Splits on LF or CRLF; a trailing line break does not start an empty line.
export function splitLines(text: string): SplitText {
  const eol = text.includes('\r\n') ? '\r\n' : '\n'
  if (text === '') return { lines: [], eol, finalEol: false }
  const finalEol = text.endsWith('\n')
  const body = finalEol ? text.slice(0, text.endsWith('\r\n') ? -2 : -1) : text
  return { lines: body.split(/\r?\n/), eol, finalEol }
}

export function joinLines(s: SplitText): string {
  if (s.lines.length === 0) return ''
  return s.lines.join(s.eol) + (s.finalEol ? s.eol : '')
}
