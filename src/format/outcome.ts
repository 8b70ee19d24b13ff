import { pyJsonLiteral } from '../guest/py-literal.js'

// How a block's outcome reads to a model: what it printed, its value, and a failure as
// `✗ <phase> error: <message>` with the excerpt and the hints on their own lines. One
// renderer, so every surface that hands outcomes to a model (MCP, the agent loop) says the
// same thing the same way.

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
  error?: RenderedError | null
  timedOut?: boolean
}

// The guest appends its hints to the message ("\nhint: ..."); they are shown once, below the
// excerpt, where the model reads them after seeing where it failed.
function splitHints(error: RenderedError): { message: string; hints: string[] } {
  const hints = Array.isArray(error.hints)
    ? error.hints.filter((h): h is string => typeof h === 'string')
    : []
  const suffix = hints.map((h) => `\nhint: ${h}`).join('')
  const message =
    suffix && error.message.endsWith(suffix) ? error.message.slice(0, -suffix.length) : error.message
  return { message, hints }
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

// stdout as printed, then the value of a last expression (`→ value`), then the error.
// An outcome with nothing to show says so, so a model never reads an empty reply.
export function renderOutcomeText(outcome: RenderableOutcome): string {
  const parts: string[] = []
  const stdout = outcome.stdout ?? ''
  if (stdout) parts.push(stdout.endsWith('\n') ? stdout.slice(0, -1) : stdout)
  if (outcome.result !== undefined && outcome.result !== null && !outcome.error) {
    parts.push(`→ ${renderResult(outcome.result)}`)
  }
  if (outcome.error) parts.push(renderError(outcome.error))
  if (parts.length === 0) parts.push('(no output)')
  return parts.join('\n')
}
