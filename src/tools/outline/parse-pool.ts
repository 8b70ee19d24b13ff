import type { Worker } from 'node:worker_threads'
import { hostDependencyDirs } from '../../util/dependency-dirs.js'
import { isErrorCode } from '../../util/error-catalogue.js'
import { type ErrorContext, VisError } from '../../util/errors.js'
import { notedSessionRoots } from '../../util/host-programs.js'
import { startModuleWorker } from '../../util/module-worker.js'
import type { LanguageSpec } from './languages.js'
import { type Outline, ParseTimeout } from './parse.js'
import type { SkeletonLimits } from './skeleton.js'

// What crosses to the parser thread and back (parse-thread.ts).
export interface ParseRequest {
  id: number
  lang: string
  text: string
  // From the parse's start (the grammar loaded): the thread's parser cancels itself then.
  timeoutMs: number
  limits: SkeletonLimits
  op: string
  path: string
  // The roots this process's sessions opened (host-programs.ts notes them in the main thread
  // only): the thread judges the modules it loads against them and every live jail's.
  roots: string[]
  // The main thread's dependency directories (dependency-dirs.ts), for the same reason.
  dependencyDirs: string[]
}
export interface ParseReply {
  id: number
  ok?: Outline
  // The parse began: the hard limit runs from here.
  started?: true
  timeout?: true
  // The call failed in a way that may have corrupted the thread's WASM runtime (a trap): the
  // pool terminates the thread and the next call starts a fresh one.
  retire?: true
  error?: { code: string; message: string; context: ErrorContext }
}

// If the thread has not answered this long past a parse's timeout (its cancellation did not
// fire), it is terminated: the call times out and the next one starts a fresh thread. Loading
// the runtime and a grammar is bounded too, more generously (a cold start on a loaded host).
const HARD_GRACE_MS = 2000
const LOAD_LIMIT_MS = 60_000

interface Pending {
  resolve(r: ParseReply): void
  reject(err: Error): void
  timer: NodeJS.Timeout
  worker: Worker
  timeoutMs: number
}

let thread: Worker | undefined
let seq = 0
const pending = new Map<number, Pending>()

function hardLimit(id: number, w: Worker, ms: number): NodeJS.Timeout {
  return setTimeout(() => {
    settle({ id, timeout: true })
    void w.terminate()
  }, ms)
}

function settle(r: ParseReply): void {
  const p = pending.get(r.id)
  if (!p) return
  if (r.started) {
    clearTimeout(p.timer)
    p.timer = hardLimit(r.id, p.worker, p.timeoutMs + HARD_GRACE_MS)
    return
  }
  pending.delete(r.id)
  clearTimeout(p.timer)
  if (r.retire) retireThread(p.worker)
  p.resolve(r)
}

function retireThread(w: Worker): void {
  if (thread === w) thread = undefined
  void w.terminate()
}

function lost(w: Worker, why: string): void {
  if (thread === w) thread = undefined
  for (const [id, p] of pending) {
    if (p.worker !== w) continue
    pending.delete(id)
    clearTimeout(p.timer)
    p.reject(
      new VisError(
        'tool.index-failed',
        `index: the parser thread stopped (${why}); try again, a new one starts`,
        {
          op: 'index',
        },
      ),
    )
  }
}

// One thread for the process, started on first use; it does not keep the process alive.
function parserThread(): Worker {
  if (thread) return thread
  const w = startModuleWorker(import.meta.url, 'parse-thread')
  w.on('message', settle)
  w.on('error', (err) => lost(w, err.message))
  w.on('exit', (code) => lost(w, `exit ${code}`))
  w.unref()
  thread = w
  return w
}

// outline() in the parser thread: resolves with the definitions, throws ParseTimeout past the
// timeout and the thread's VisErrors as they were (tool.no-grammar...).
export async function parseOffThread(
  lang: LanguageSpec,
  text: string,
  timeoutMs: number,
  limits: SkeletonLimits,
  op: string,
  path: string,
): Promise<Outline> {
  const w = parserThread()
  const id = ++seq
  const reply = await new Promise<ParseReply>((resolve, reject) => {
    const timer = hardLimit(id, w, LOAD_LIMIT_MS + timeoutMs + HARD_GRACE_MS)
    pending.set(id, { resolve, reject, timer, worker: w, timeoutMs })
    const seen = { roots: notedSessionRoots(), dependencyDirs: hostDependencyDirs() }
    w.postMessage({ id, lang: lang.id, text, timeoutMs, limits, op, path, ...seen } satisfies ParseRequest)
  })
  if (reply.ok) return reply.ok
  if (reply.timeout) throw new ParseTimeout(path)
  const e = reply.error!
  throw new VisError(isErrorCode(e.code) ? e.code : 'tool.index-failed', e.message, e.context)
}
