import { pyJsonLiteral } from '../guest/py-literal.js'

// How a block's outcome reads to a model: what it printed, its value, a failure as
// `✗ <phase> error: <message>` with the excerpt and the hints on their own lines, and the
// `survived` report. One renderer, so every surface that hands outcomes to a model (MCP, the
// agent loop) says the same thing the same way; each surface only adds what is its own (the
// agent loop's stdout clipping and image parts, MCP's resource links).

// The most of a block's stdout a model reads, on every surface that hands it one (the agent
// loop, MCP): a 1 MiB print would otherwise fill its context with one call.
export const STDOUT_CLIP_CHARS = 65_536

// The block's stdout as the model reads it: cut at the clip with a notice saying how much.
export function clipStdout(stdout: string, max = STDOUT_CLIP_CHARS): string {
  if (stdout.length <= max) return stdout
  const cut = stdout.length - max
  const n = (x: number) => x.toLocaleString('en-US')
  return (
    `${stdout.slice(0, max)}\n` +
    `[vis: stdout clipped: ${n(cut)} of ${n(stdout.length)} characters were cut. ` +
    'Narrow the next block: print less (a slice, a count, a summary, a grep) instead of everything.]'
  )
}

export type RenderedError = {
  phase?: unknown
  code?: unknown
  message: string
  excerpt?: unknown
  hints?: unknown
  [key: string]: unknown
}

export type RenderableOutcome = {
  stdout?: string | null
  result?: unknown
  // The last expression's value when the block also printed (result is then absent).
  value?: unknown
  error?: RenderedError | null
  timedOut?: boolean
  survived?: unknown
}

// The guest appends its hints to the message ("\nhint: ..."); then they are shown once, below
// the excerpt, where the model reads them after seeing where it failed. Hints a message does
// not end with are kept where the message has them and only the others are added below.
function splitHints(error: RenderedError): { message: string; hints: string[] } {
  const hints = Array.isArray(error.hints)
    ? error.hints.filter((h): h is string => typeof h === 'string')
    : []
  const suffix = hints.map((h) => `\nhint: ${h}`).join('')
  if (suffix && error.message.endsWith(suffix)) {
    return { message: error.message.slice(0, -suffix.length), hints }
  }
  return { message: error.message, hints: hints.filter((h) => !error.message.includes(h)) }
}

// The phase the guest reported, else one derived from a stored code (`block.syntax`,
// `worker.retired` for a worker that failed under the block).
function phaseOf(error: RenderedError): string {
  if (typeof error.phase === 'string' && error.phase) return error.phase
  if (typeof error.code === 'string' && error.code) {
    return error.code.startsWith('block.') ? error.code.slice('block.'.length) : error.code
  }
  return 'runtime'
}

export function renderError(error: RenderedError): string {
  const { message, hints } = splitHints(error)
  const lines = [`✗ ${phaseOf(error)} error: ${message}`]
  if (typeof error.excerpt === 'string' && error.excerpt) lines.push(error.excerpt)
  for (const h of hints) lines.push(`hint: ${h}`)
  return lines.join('\n')
}

// JSON for a report line; what JSON cannot carry (a cycle, a bigint) as its string.
export function jsonText(v: unknown): string {
  try {
    return JSON.stringify(v)
  } catch {
    return String(v)
  }
}

// The `survived` report (issue 13: what outlived an interrupt, a timeout or a worker
// replacement), from the outcome or, in older rows, its error; a shape this does not know is
// shown as JSON.
export function renderSurvived(survived: unknown, error?: RenderedError | null): string | undefined {
  const s = survived ?? error?.survived
  if (s === undefined || s === null) return undefined
  if (typeof s === 'string') return `survived: ${s}`
  const r = s as {
    cause?: unknown
    worker_replaced?: unknown
    intact?: unknown
    restored?: unknown
    lost?: unknown
    cancelled?: unknown
  }
  const names = (x: unknown) => (Array.isArray(x) && x.length > 0 ? x.map(String).join(', ') : '-')
  if (typeof r.cause !== 'string' || !Array.isArray(r.intact)) return `survived: ${jsonText(s)}`
  const calls = Array.isArray(r.cancelled)
    ? r.cancelled.map((c: { tool?: unknown; call_id?: unknown }) => `${String(c.tool)}#${String(c.call_id)}`)
    : []
  return (
    `survived (${r.cause}${r.worker_replaced === true ? ', the worker was replaced' : ''}): ` +
    `intact: ${names(r.intact)}; restored: ${names(r.restored)}; lost: ${names(r.lost)}; ` +
    `cancelled tool calls: ${names(calls)}`
  )
}

// Data as the Python literal the model would write; a top-level string as is (the guest sends
// objects JSON cannot carry as their repr, which must not be quoted again).
export function renderResult(result: unknown): string {
  if (typeof result === 'string') return result
  try {
    return pyJsonLiteral(result)
  } catch {
    return JSON.stringify(result)
  }
}

// stdout as printed, then the value of a last expression (`→ value`: the result, or the value
// of a block that also printed, as a notebook shows both), then the error and the survived report. An outcome with nothing to show says so, so a model never reads an empty reply.
export function renderOutcomeText(outcome: RenderableOutcome): string {
  const parts: string[] = []
  const stdout = outcome.stdout ?? ''
  if (stdout) parts.push(stdout.endsWith('\n') ? stdout.slice(0, -1) : stdout)
  const shown = outcome.result ?? outcome.value
  if (shown !== undefined && shown !== null && !outcome.error) parts.push(`→ ${renderResult(shown)}`)
  if (outcome.error) parts.push(renderError(outcome.error))
  const survived = renderSurvived(outcome.survived, outcome.error)
  if (survived) parts.push(survived)
  if (parts.length === 0) parts.push('(no output)')
  return parts.join('\n')
}
