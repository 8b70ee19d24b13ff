import { createHash } from 'node:crypto'
import { errorMessage } from '../util/errors.js'
import { type FormatOutcome, formatOffThread } from './format-pool.js'
import { Lru } from './lru.js'
import { type RuffEngine, ruffEngine } from './ruff.js'

// Code longer than this is shown as written: formatting it would stall the host's event loop
// for a display nicety, and nobody reads a 100 KB block in a transcript anyway.
export const MAX_FORMAT_CHARS = 100_000
export const DEFAULT_CACHE_ENTRIES = 1000
// What one code may cost the formatter thread. Ordinary blocks take milliseconds; past this
// the thread is ended and the code shown as written (and remembered as such).
export const FORMAT_TIMEOUT_MS = 2000

export type FormatStatus = 'formatted' | 'verbatim'
export type FormatResult = {
  code: string
  status: FormatStatus
  // Why the code is verbatim: 'unavailable', 'too-large', 'parse-error', or (off the event loop
  // only) 'timeout' and 'failed' (a WASM trap: the formatter thread was replaced).
  reason?: 'unavailable' | 'too-large' | 'parse-error' | 'timeout' | 'failed'
  detail?: string
}

export type FormatterOptions = {
  // Where the ruff workspace comes from (default: the process-wide one).
  engine?: () => RuffEngine | undefined
  maxChars?: number
  cacheEntries?: number
  // formatOffLoop's bound on one code's formatting in the thread.
  timeoutMs?: number
}

// Formats model-written Python for people to read. Display only: the stored code is always the
// original. Results are memoised by content hash, since the same block is shown many times
// (transcript pages, API listings, event replays).
export class PythonFormatter {
  private readonly cache: Lru<string, FormatResult>
  private readonly engine: () => RuffEngine | undefined
  private readonly maxChars: number
  private readonly timeoutMs: number
  // The same code asked for again while its format is under way waits for that one.
  private readonly inFlight = new Map<string, Promise<FormatResult>>()

  constructor(opts: FormatterOptions = {}) {
    this.engine = opts.engine ?? ruffEngine
    this.maxChars = opts.maxChars ?? MAX_FORMAT_CHARS
    this.timeoutMs = opts.timeoutMs ?? FORMAT_TIMEOUT_MS
    this.cache = new Lru(opts.cacheEntries ?? DEFAULT_CACHE_ENTRIES)
  }

  get cachedEntries(): number {
    return this.cache.size
  }

  format(code: string): FormatResult {
    if (code.length > this.maxChars) return { code, status: 'verbatim', reason: 'too-large' }
    const key = createHash('sha256').update(code).digest('base64url')
    const hit = this.cache.get(key)
    if (hit) return hit
    const ruff = this.engine()
    // Not cached: ruff may become available to another formatter, and the check is cheap.
    if (!ruff) return { code, status: 'verbatim', reason: 'unavailable' }
    let result: FormatResult
    try {
      result = { code: ruff.format(code), status: 'formatted' }
    } catch (err) {
      result = { code, status: 'verbatim', reason: 'parse-error', detail: errorMessage(err) }
    }
    this.cache.set(key, result)
    return result
  }

  // The server's way (HTTP routes): ruff runs in the formatter thread, bounded in time; the
  // event loop only waits. A timeout or a trap is remembered like a parse error, so the same
  // hostile code never costs the thread twice.
  async formatOffLoop(code: string): Promise<FormatResult> {
    if (code.length > this.maxChars) return { code, status: 'verbatim', reason: 'too-large' }
    const key = createHash('sha256').update(code).digest('base64url')
    const hit = this.cache.get(key)
    if (hit) return hit
    const pending = this.inFlight.get(key)
    if (pending) return pending
    const run = formatOffThread(code, this.timeoutMs).then((outcome) => {
      this.inFlight.delete(key)
      const result = resultOf(code, outcome)
      if (result.reason !== 'unavailable') this.cache.set(key, result)
      return result
    })
    this.inFlight.set(key, run)
    return run
  }
}

function resultOf(code: string, outcome: FormatOutcome): FormatResult {
  if ('ok' in outcome) return { code: outcome.ok, status: 'formatted' }
  if ('parseError' in outcome)
    return { code, status: 'verbatim', reason: 'parse-error', detail: outcome.parseError }
  if ('timeout' in outcome) return { code, status: 'verbatim', reason: 'timeout' }
  if ('failed' in outcome) return { code, status: 'verbatim', reason: 'failed', detail: outcome.failed }
  return { code, status: 'verbatim', reason: 'unavailable', detail: outcome.unavailable }
}

let shared: PythonFormatter | undefined

// The process-wide formatter over the process-wide ruff workspace (library calls and the CLI,
// which have no event loop to share).
export function formatPythonForDisplay(code: string): string {
  shared ??= new PythonFormatter()
  return shared.format(code).code
}

// The same, off the event loop: what the server uses for `?format=display`.
export async function formatPythonForDisplayOffLoop(code: string): Promise<string> {
  shared ??= new PythonFormatter()
  return (await shared.formatOffLoop(code)).code
}
