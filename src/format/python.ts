import { createHash } from 'node:crypto'
import { errorMessage } from '../util/errors.js'
import { type FormatOutcome, formatBatchOffThread, formatOffThread } from './format-pool.js'
import { Lru } from './lru.js'
import { type RuffEngine, ruffEngine } from './ruff.js'

// Code longer than this is shown as written: formatting it would stall the host's event loop
// for a display nicety, and nobody reads a 100 KB block in a transcript anyway.
export const MAX_FORMAT_CHARS = 100_000
export const DEFAULT_CACHE_ENTRIES = 1000
// The formatter's OUTPUT is bounded too (fourteenth outsider pass): ruff breaks a nested literal
// too long for a line into one element a line, each indented deeper, so 4 KB of `x = [a, [a, …]]`
// formats to 3.8 MB. A formatted code longer than MAX_FORMAT_GROWTH times its input (at least
// FORMAT_GROWTH_FLOOR_CHARS), or than MAX_FORMATTED_CHARS, is not used: the code is shown as
// written. Ordinary formatting changes whitespace; even a long data table nested in a class grows a
// few times at most. A view with its own field bound (the session view's 65 536 characters,
// src/http/block-route.ts addCodeDisplay) also shows a longer formatted code as written.
export const MAX_FORMATTED_CHARS = 2 * MAX_FORMAT_CHARS
export const MAX_FORMAT_GROWTH = 8
export const FORMAT_GROWTH_FLOOR_CHARS = 4096
// The cache's bound in characters (formatted or verbatim code, and a parse error's message), so
// what it holds does not grow with what each entry holds: ~16 MiB at most.
export const DEFAULT_CACHE_CHARS = 8 * 2 ** 20
// What one code may cost the formatter thread. Ordinary blocks take milliseconds; past this
// the thread is ended and the code shown as written (and remembered as such).
export const FORMAT_TIMEOUT_MS = 2000

export type FormatStatus = 'formatted' | 'verbatim'
export type FormatResult = {
  code: string
  status: FormatStatus
  // Why the code is verbatim: 'unavailable', 'too-large', 'parse-error', or (off the event loop
  // only) 'timeout', 'failed' (a WASM trap: the formatter thread was replaced) and 'busy' (it
  // waited past the queue bound for the thread: not remembered, the next view formats it).
  // 'too-large' is the input past maxChars or, with a detail saying so, the formatted code past
  // formattedBound.
  reason?: 'unavailable' | 'too-large' | 'parse-error' | 'timeout' | 'failed' | 'busy'
  detail?: string
}

export type FormatterOptions = {
  // Where the ruff workspace comes from (default: the process-wide one).
  engine?: () => RuffEngine | undefined
  maxChars?: number
  // The longest formatted code used (default MAX_FORMATTED_CHARS; see formattedBound).
  maxFormattedChars?: number
  cacheEntries?: number
  // The cache's bound in characters (default DEFAULT_CACHE_CHARS).
  cacheChars?: number
  // formatOffLoop's bound on one code's formatting in the thread.
  timeoutMs?: number
  // formatOffLoop's bound on the wait for the thread (default FORMAT_QUEUE_WAIT_MS).
  queueWaitMs?: number
}

// Formats model-written Python for people to read. Display only: the stored code is always the
// original. Results are memoised by content hash, since the same block is shown many times
// (transcript pages, API listings, event replays).
export class PythonFormatter {
  private readonly cache: Lru<string, FormatResult>
  private readonly engine: () => RuffEngine | undefined
  private readonly maxChars: number
  private readonly maxFormattedChars: number
  private readonly timeoutMs: number
  private readonly queueWaitMs: number | undefined
  // The same code asked for again while its format is under way waits for that one.
  private readonly inFlight = new Map<string, Promise<FormatResult>>()

  constructor(opts: FormatterOptions = {}) {
    this.engine = opts.engine ?? ruffEngine
    this.maxChars = opts.maxChars ?? MAX_FORMAT_CHARS
    this.maxFormattedChars = opts.maxFormattedChars ?? MAX_FORMATTED_CHARS
    this.timeoutMs = opts.timeoutMs ?? FORMAT_TIMEOUT_MS
    this.queueWaitMs = opts.queueWaitMs
    this.cache = new Lru(opts.cacheEntries ?? DEFAULT_CACHE_ENTRIES, {
      maxWeight: opts.cacheChars ?? DEFAULT_CACHE_CHARS,
      weigh: (r) => r.code.length + (r.detail?.length ?? 0),
    })
  }

  get cachedEntries(): number {
    return this.cache.size
  }

  // What the cache holds, in characters.
  get cachedChars(): number {
    return this.cache.weight
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
      const bound = formattedBound(code, this.maxFormattedChars)
      const out = ruff.format(code)
      result = out.length <= bound ? { code: out, status: 'formatted' } : tooLarge(code, out.length, bound)
    } catch (err) {
      result = { code, status: 'verbatim', reason: 'parse-error', detail: errorMessage(err) }
    }
    this.cache.set(key, result)
    return result
  }

  // The server's way (HTTP routes): ruff runs in the formatter thread, bounded in time; the
  // event loop only waits. A timeout or a trap is remembered like a parse error, so the same
  // hostile code never costs the thread twice.
  // `caller` (a session id): whose turn the call waits for (format-pool.ts formatOffThread).
  async formatOffLoop(code: string, caller?: string): Promise<FormatResult> {
    if (code.length > this.maxChars) return { code, status: 'verbatim', reason: 'too-large' }
    const key = createHash('sha256').update(code).digest('base64url')
    const hit = this.cache.get(key)
    if (hit) return hit
    const pending = this.inFlight.get(key)
    if (pending) return pending
    const bound = formattedBound(code, this.maxFormattedChars)
    const run = formatOffThread(code, this.timeoutMs, bound, { caller, maxWaitMs: this.queueWaitMs }).then(
      (outcome) => {
        this.inFlight.delete(key)
        const result = resultOf(code, outcome, bound)
        if (result.reason !== 'unavailable' && result.reason !== 'busy') this.cache.set(key, result)
        return result
      },
    )
    this.inFlight.set(key, run)
    return run
  }

  // Several codes (a session view's blocks) off the event loop as ONE call for the thread
  // (format-pool.ts formatBatchOffThread): the view waits one turn, whatever its length. Codes
  // remembered or already under way are not sent again.
  async formatManyOffLoop(codes: readonly string[], caller?: string): Promise<FormatResult[]> {
    const results: Array<FormatResult | Promise<FormatResult>> = []
    const send = new Map<string, { code: string; bound: number; settle: (r: FormatResult) => void }>()
    for (const code of codes) {
      if (code.length > this.maxChars) {
        results.push({ code, status: 'verbatim', reason: 'too-large' })
        continue
      }
      const key = createHash('sha256').update(code).digest('base64url')
      const known = this.cache.get(key) ?? this.inFlight.get(key)
      if (known) {
        results.push(known)
        continue
      }
      let settle: (r: FormatResult) => void = () => undefined
      const run = new Promise<FormatResult>((resolve) => {
        settle = resolve
      })
      this.inFlight.set(key, run)
      send.set(key, { code, bound: formattedBound(code, this.maxFormattedChars), settle })
      results.push(run)
    }
    if (send.size > 0) {
      const batch = [...send]
      const outcomes = await formatBatchOffThread(
        batch.map(([, b]) => ({ code: b.code, maxChars: b.bound })),
        this.timeoutMs,
        { caller, maxWaitMs: this.queueWaitMs },
      )
      batch.forEach(([key, b], i) => {
        this.inFlight.delete(key)
        const result = resultOf(b.code, outcomes[i]!, b.bound)
        if (result.reason !== 'unavailable' && result.reason !== 'busy') this.cache.set(key, result)
        b.settle(result)
      })
    }
    return Promise.all(results)
  }
}

// The longest formatted code used for `code`: a small multiple of it, never past `max`.
export function formattedBound(code: string, max = MAX_FORMATTED_CHARS): number {
  return Math.min(max, Math.max(FORMAT_GROWTH_FLOOR_CHARS, code.length * MAX_FORMAT_GROWTH))
}

function tooLarge(code: string, formatted: number, bound: number): FormatResult {
  return {
    code,
    status: 'verbatim',
    reason: 'too-large',
    detail: `formatted, the code would be ${formatted} characters (more than ${bound}): shown as written`,
  }
}

function resultOf(code: string, outcome: FormatOutcome, bound: number): FormatResult {
  if ('ok' in outcome) return { code: outcome.ok, status: 'formatted' }
  if ('tooLarge' in outcome) return tooLarge(code, outcome.tooLarge, bound)
  if ('parseError' in outcome)
    return { code, status: 'verbatim', reason: 'parse-error', detail: outcome.parseError }
  if ('timeout' in outcome) return { code, status: 'verbatim', reason: 'timeout' }
  if ('failed' in outcome) return { code, status: 'verbatim', reason: 'failed', detail: outcome.failed }
  if ('busy' in outcome) return { code, status: 'verbatim', reason: 'busy' }
  return { code, status: 'verbatim', reason: 'unavailable', detail: outcome.unavailable }
}

let shared: PythonFormatter | undefined

// The process-wide formatter over the process-wide ruff workspace (library calls and the CLI,
// which have no event loop to share).
export function formatPythonForDisplay(code: string): string {
  shared ??= new PythonFormatter()
  return shared.format(code).code
}

// Several codes off the event loop, as one turn of the formatter thread: a session view's blocks.
export async function formatManyPythonForDisplayOffLoop(
  codes: readonly string[],
  caller?: string,
): Promise<string[]> {
  shared ??= new PythonFormatter()
  return (await shared.formatManyOffLoop(codes, caller)).map((r) => r.code)
}

// The same, off the event loop: what the server uses for `?format=display`.
export async function formatPythonForDisplayOffLoop(code: string, caller?: string): Promise<string> {
  shared ??= new PythonFormatter()
  return (await shared.formatOffLoop(code, caller)).code
}
