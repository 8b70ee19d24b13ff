import { createHash } from 'node:crypto'
import { errorMessage } from '../util/errors.js'
import { Lru } from './lru.js'
import { type RuffEngine, ruffEngine } from './ruff.js'

// Code longer than this is shown as written: formatting it would stall the host's event loop
// for a display nicety, and nobody reads a 100 KB block in a transcript anyway.
export const MAX_FORMAT_CHARS = 100_000
export const DEFAULT_CACHE_ENTRIES = 1000

export type FormatStatus = 'formatted' | 'verbatim'
export type FormatResult = {
  code: string
  status: FormatStatus
  // Why the code is verbatim: 'unavailable', 'too-large' or 'parse-error'.
  reason?: 'unavailable' | 'too-large' | 'parse-error'
  detail?: string
}

export type FormatterOptions = {
  // Where the ruff workspace comes from (default: the process-wide one).
  engine?: () => RuffEngine | undefined
  maxChars?: number
  cacheEntries?: number
}

// Formats model-written Python for people to read. Display only: the stored code is always the
// original. Results are memoised by content hash, since the same block is shown many times
// (transcript pages, API listings, event replays).
export class PythonFormatter {
  private readonly cache: Lru<string, FormatResult>
  private readonly engine: () => RuffEngine | undefined
  private readonly maxChars: number

  constructor(opts: FormatterOptions = {}) {
    this.engine = opts.engine ?? ruffEngine
    this.maxChars = opts.maxChars ?? MAX_FORMAT_CHARS
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
}

let shared: PythonFormatter | undefined

// The process-wide formatter over the process-wide ruff workspace.
export function formatPythonForDisplay(code: string): string {
  shared ??= new PythonFormatter()
  return shared.format(code).code
}
