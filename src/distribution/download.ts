import { createHash } from 'node:crypto'
import { closeSync, createReadStream, createWriteStream, readFileSync, rmSync } from 'node:fs'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import type * as Got from 'got'
import { VisError } from '../util/errors.js'
import { openLocalSource } from './local-source.js'
import { noProgress, type OnProgress } from './progress.js'

export type DownloadOptions = {
  onProgress?: OnProgress
  // Extra attempts after the first for transient failures (not 4xx).
  retries?: number
  // Idle socket timeout; a stalled server fails instead of hanging.
  idleTimeoutMs?: number
  // A bound on each attempt as a whole (connect, headers, body), for probes that must not wait.
  attemptTimeoutMs?: number
  // When the whole download (every attempt, every file) must have finished (Date.now() ms);
  // past it the download fails instead of retrying (downloadDeadline()).
  deadline?: number
}

function seconds(name: string, fallback: number): number {
  const n = Number(process.env[name])
  return Number.isFinite(n) && n > 0 ? n : fallback
}

// A server that accepts and then sends nothing for this long is a stall: the attempt fails and
// is retried (VIS_DOWNLOAD_STALL_S, default 20 s).
export function stallMs(): number {
  return seconds('VIS_DOWNLOAD_STALL_S', 20) * 1000
}

// The whole of a CPython download, retries included, gives up after VIS_DOWNLOAD_DEADLINE_S
// (default 300 s: 12 MB at 40 kB/s): a first session never waits on a dead mirror for longer.
export function downloadDeadline(from = Date.now()): number {
  return from + seconds('VIS_DOWNLOAD_DEADLINE_S', 300) * 1000
}

// got is loaded on first use: importing it costs ~20 MB and ~100 ms, and every session
// worker imports this module (through the distribution resolver) without downloading.
let gotModule: typeof Got | undefined
async function loadGot(): Promise<typeof Got> {
  gotModule ??= await import('got')
  return gotModule
}

const TIMEOUTS = { lookup: 10_000, connect: 10_000, secureConnect: 10_000 }

function timeouts(opts: DownloadOptions): Got.Delays {
  const left = opts.deadline === undefined ? undefined : Math.max(1, opts.deadline - Date.now())
  const bounds = [opts.attemptTimeoutMs, left].filter((n): n is number => n !== undefined)
  const request = bounds.length ? Math.min(...bounds) : undefined
  const stall = opts.idleTimeoutMs ?? stallMs()
  return { ...TIMEOUTS, response: stall, socket: stall, ...(request ? { request } : {}) }
}

function describe(err: unknown): string {
  const { HTTPError, RequestError } = gotModule ?? {}
  if (HTTPError && err instanceof HTTPError)
    return `HTTP ${err.response.statusCode} ${err.response.statusMessage ?? ''}`.trim()
  if (RequestError && err instanceof RequestError)
    return err.code ? `${err.code}: ${err.message}` : err.message
  return err instanceof Error ? err.message : String(err)
}

function permanent(err: unknown): boolean {
  const HTTPError = gotModule?.HTTPError
  return (
    !!HTTPError && err instanceof HTTPError && err.response.statusCode >= 400 && err.response.statusCode < 500
  )
}

function defaultRetries(): number {
  const n = Number(process.env.VIS_DOWNLOAD_RETRIES)
  return Number.isInteger(n) && n >= 0 ? n : 2
}

async function withRetries<T>(url: string, opts: DownloadOptions, attempt: () => Promise<T>): Promise<T> {
  const retries = opts.retries ?? defaultRetries()
  const onProgress = opts.onProgress ?? noProgress
  for (let i = 0; ; i++) {
    try {
      return await attempt()
    } catch (err) {
      if (err instanceof VisError) throw err
      const late = opts.deadline !== undefined && Date.now() + 250 * (i + 1) >= opts.deadline
      if (late) {
        const limit = Number(process.env.VIS_DOWNLOAD_DEADLINE_S) || 300
        throw new VisError(
          'dist.download',
          `could not download ${url} within the download's limit (${limit} s, VIS_DOWNLOAD_DEADLINE_S): ${describe(err)}`,
          { url },
          { cause: err },
        )
      }
      if (i >= retries || permanent(err)) {
        throw new VisError(
          'dist.download',
          `could not download ${url}: ${describe(err)}`,
          { url },
          { cause: err },
        )
      }
      // Said as it happens: a stalled mirror otherwise looks like a hung command.
      onProgress({ step: 'retry', detail: `${url}: ${describe(err)}; attempt ${i + 2} of ${retries + 1}` })
      await new Promise((r) => setTimeout(r, 250 * (i + 1)))
    }
  }
}

// file:// URLs (an offline mirror, a bundle) are read from disk, each through one descriptor opened
// and judged at the moment of reading (local-source.ts: never from inside a writable root); a
// missing file is as permanent as a 404, so it is not retried.
function localPath(url: string): string | undefined {
  return url.startsWith('file:') ? fileURLToPath(url) : undefined
}

function localFailure(url: string, err: unknown): VisError {
  return new VisError(
    'dist.download',
    `could not read ${url}: ${(err as Error).message}`,
    { url },
    { cause: err },
  )
}

export async function fetchText(url: string, opts: DownloadOptions = {}): Promise<string> {
  const local = localPath(url)
  if (local) {
    let fd: number | undefined
    try {
      fd = openLocalSource(url, local)
      return readFileSync(fd, 'utf8')
    } catch (err) {
      if (err instanceof VisError) throw err
      throw localFailure(url, err)
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
  }
  const { default: got } = await loadGot()
  return withRetries(url, opts, () => got(url, { timeout: timeouts(opts), retry: { limit: 0 } }).text())
}

// Streams url into file, hashing as it goes; returns the sha256. A failed
// attempt removes the partial file before the next one.
export async function downloadFile(url: string, file: string, opts: DownloadOptions = {}): Promise<string> {
  const onProgress = opts.onProgress ?? noProgress
  const local = localPath(url)
  if (local) return copyLocal(url, local, file, onProgress)
  const { default: got } = await loadGot()
  return withRetries(url, opts, async () => {
    const hash = createHash('sha256')
    const stream = got.stream(url, {
      timeout: timeouts(opts),
      retry: { limit: 0 },
    })
    stream.on('downloadProgress', (p: { transferred: number; total?: number }) => {
      onProgress({ step: 'download', detail: url, done: p.transferred, total: p.total })
    })
    const tee = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        hash.update(chunk)
        cb(null, chunk)
      },
    })
    try {
      await pipeline(stream, tee, createWriteStream(file))
    } catch (err) {
      rmSync(file, { force: true })
      throw err
    }
    return hash.digest('hex')
  })
}

async function copyLocal(url: string, from: string, file: string, onProgress: OnProgress): Promise<string> {
  const hash = createHash('sha256')
  let done = 0
  const tee = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk)
      done += chunk.length
      onProgress({ step: 'download', detail: url, done })
      cb(null, chunk)
    },
  })
  let fd: number
  try {
    fd = openLocalSource(url, from)
  } catch (err) {
    if (err instanceof VisError) throw err
    throw localFailure(url, err)
  }
  try {
    // The stream closes the descriptor when it ends or fails.
    await pipeline(createReadStream(from, { fd }), tee, createWriteStream(file))
  } catch (err) {
    rmSync(file, { force: true })
    throw localFailure(url, err)
  }
  return hash.digest('hex')
}
