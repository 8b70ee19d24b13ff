import type { Worker } from 'node:worker_threads'
import { startModuleWorker } from '../util/module-worker.js'

// What crosses to the formatter thread (format-thread.ts) and back.
export interface FormatRequest {
  id: number
  code: string
  // The longest formatted code the caller uses (python.ts formattedBound): a longer one is not
  // sent back, only its length (ruff can make 4 KB of nested literal 3.8 MB).
  maxChars: number
}
export interface FormatReply {
  id: number
  // ruff is loaded and formatting has begun: the time bound runs from here.
  started?: true
  ok?: string
  // ruff's output was longer than the request's maxChars: this many characters.
  tooLarge?: number
  // The code did not parse (ruff's own error): nothing is wrong with the thread.
  parseError?: string
  // A WASM trap (stack overflow, out-of-bounds access): the thread is ended, the next call
  // starts a fresh one, so one block's trap never reaches another session's code.
  trap?: string
  unavailable?: string
}

export type FormatOutcome =
  | { ok: string }
  | { tooLarge: number }
  | { parseError: string }
  | { failed: string }
  | { timeout: true }
  | { unavailable: string }
  | { busy: true }

// Loading ruff's WASM in a fresh thread (a cold start on a loaded host) has its own bound.
const LOAD_LIMIT_MS = 60_000

let thread: Worker | undefined
let seq = 0
// One code at a time: a call's time bound then measures its own formatting, not a queue. The
// calls wait in one queue per caller (a session), served in turn (fifteenth outsider pass: one
// first-in-first-out chain made every session's display wait behind each slow code another
// session had asked for first).
// A call is one code or a batch of them (a session view's codes): either way ONE turn.
type Waiting = { run: () => Promise<FormatOutcome[]>; resolve: (o: FormatOutcome[]) => void }
const waiting = new Map<string, Waiting[]>()
let serving = false

function formatterThread(): Worker {
  if (thread) return thread
  const w = startModuleWorker(import.meta.url, 'format-thread')
  w.unref()
  // Errors reach the call in flight through 'exit' (below); without a listener one would throw.
  w.on('error', () => undefined)
  // A thread that ends between calls is not given the next one (it would wait LOAD_LIMIT_MS for a
  // reply that never comes).
  w.once('exit', () => {
    if (thread === w) thread = undefined
  })
  thread = w
  return w
}

function retire(w: Worker): void {
  if (thread === w) thread = undefined
  void w.terminate()
}

// `onStarted`: told when ruff is loaded and the code's formatting begins (its time bound runs
// from there). `withLoad`: the time bound runs from the call instead, a thread's start and ruff's
// load included (a batch's later codes, formatBatch).
function formatOnce(
  code: string,
  timeoutMs: number,
  maxChars: number,
  onStarted?: () => void,
  withLoad = false,
): Promise<FormatOutcome> {
  const w = formatterThread()
  const id = ++seq
  return new Promise<FormatOutcome>((resolve) => {
    let timer: NodeJS.Timeout
    const done = (outcome: FormatOutcome, end: boolean) => {
      clearTimeout(timer)
      w.off('message', onMessage)
      w.off('exit', onExit)
      if (end) retire(w)
      resolve(outcome)
    }
    const limit = (ms: number) => {
      clearTimeout(timer)
      timer = setTimeout(() => done({ timeout: true }, true), ms)
    }
    const onMessage = (r: FormatReply) => {
      if (r.id !== id) return
      if (r.started) {
        onStarted?.()
        if (!withLoad) limit(timeoutMs)
      } else if (r.ok !== undefined) done({ ok: r.ok }, false)
      // Too large: ruff built the whole amplified output in its WASM memory, which never shrinks
      // (55 KB of nested literal left the thread ~250 MiB larger): the thread is ended.
      else if (r.tooLarge !== undefined) done({ tooLarge: r.tooLarge }, true)
      else if (r.parseError !== undefined) done({ parseError: r.parseError }, false)
      else if (r.trap !== undefined) done({ failed: r.trap }, true)
      else done({ unavailable: r.unavailable ?? 'ruff did not load' }, true)
    }
    const onExit = (exitCode: number) =>
      done({ failed: `the formatter thread stopped (exit ${exitCode})` }, true)
    w.on('message', onMessage)
    w.on('exit', onExit)
    limit(withLoad ? timeoutMs : LOAD_LIMIT_MS)
    w.postMessage({ id, code, maxChars } satisfies FormatRequest)
  })
}

// The longest a call waits for the thread before it is answered unformatted (`busy`). Callers
// take turns, so one caller's queue of slow codes costs another one call of it; but many callers
// (sessions) each asking for codes near the time bound would still add up: with this bound no call
// waits much longer than it plus one call's time bound, and calls past it drain at once.
export const FORMAT_QUEUE_WAIT_MS = 15_000

// ruff's format of `code` in the formatter thread, ended after `timeoutMs` of formatting (the
// thread is terminated then, and a fresh one serves the next call); an output longer than
// `maxChars` comes back as its length only. `caller` names the queue the call waits in (callers
// take turns); a call that waited more than `maxWaitMs` for its turn is not run.
export async function formatOffThread(
  code: string,
  timeoutMs: number,
  maxChars: number,
  opts: { caller?: string; maxWaitMs?: number } = {},
): Promise<FormatOutcome> {
  const [outcome] = await formatBatchOffThread([{ code, maxChars }], timeoutMs, opts)
  return outcome!
}

// Several codes (a session view's blocks) as ONE call: they wait for one turn together and are
// formatted one after another in it, within `timeoutMs` of formatting for the whole batch, so a
// view costs every other caller one turn, not one per block (sixteenth outsider pass: a view of K
// blocks rejoined the queue K times, each behind another session's next slow code). A code whose
// formatting the batch's bound ended before it had `timeoutMs` of its own, and the codes after
// it, are answered `busy` (not formatted now, not remembered as slow: the next view formats them);
// only a code that had the whole bound to itself times out.
// A turn starts the thread at most once, for its first code (under LOAD_LIMIT_MS, as a single
// code's call): a code whose output is too large (or a trap, a timeout) ends the thread, and the
// codes after it are answered `busy` too, not each sent to a fresh thread that starts and loads
// ruff (~200 ms idle, seconds on a loaded host), uncounted (seventeenth outsider pass: 150
// amplifying literals in one view were 150 restarts, ~31 s in one turn, and another session's
// display waited past FORMAT_QUEUE_WAIT_MS). The next view formats them (the one that ended the
// thread is remembered). A later code's time counts from its call, a thread's start included,
// should the thread have gone between two codes some other way.
export function formatBatchOffThread(
  items: ReadonlyArray<{ code: string; maxChars: number }>,
  timeoutMs: number,
  opts: { caller?: string; maxWaitMs?: number } = {},
): Promise<FormatOutcome[]> {
  if (items.length === 0) return Promise.resolve([])
  const queued = performance.now()
  const maxWaitMs = opts.maxWaitMs ?? FORMAT_QUEUE_WAIT_MS
  return new Promise<FormatOutcome[]>((resolve) => {
    const run = (): Promise<FormatOutcome[]> =>
      performance.now() - queued > maxWaitMs
        ? Promise.resolve(items.map(() => ({ busy: true }) as const))
        : formatBatch(items, timeoutMs)
    const caller = opts.caller ?? ''
    const queue = waiting.get(caller)
    if (queue) queue.push({ run, resolve })
    else waiting.set(caller, [{ run, resolve }])
    serveNext()
  })
}

async function formatBatch(
  items: ReadonlyArray<{ code: string; maxChars: number }>,
  timeoutMs: number,
): Promise<FormatOutcome[]> {
  const out: FormatOutcome[] = []
  let left = timeoutMs
  let ended = false
  for (const [i, { code, maxChars }] of items.entries()) {
    if (left <= 0 || ended) {
      out.push({ busy: true })
      continue
    }
    const bound = left
    const withLoad = i > 0
    const posted = performance.now()
    let began: number | undefined
    const outcome = await startCall(() =>
      formatOnce(
        code,
        bound,
        maxChars,
        () => {
          began = performance.now()
        },
        withLoad,
      ),
    )
    const from = withLoad ? posted : began
    if (from !== undefined) left -= performance.now() - from
    // Slow itself only with the whole bound for its formatting alone: a code the bound ended
    // while the thread was still starting (or with a start counted) is busy, not remembered.
    const ownBound = !withLoad && bound === timeoutMs && began !== undefined
    out.push('timeout' in outcome && !ownBound ? { busy: true } : outcome)
    ended = endsThread(outcome)
  }
  return out
}

// The outcomes after which the thread is gone (formatOnce retires it) or never started.
const endsThread = (o: FormatOutcome): boolean =>
  'tooLarge' in o || 'failed' in o || 'timeout' in o || 'unavailable' in o

// The next caller in turn gives its oldest call to the thread and goes to the back of the line
// (a Map iterates in insertion order).
function serveNext(): void {
  if (serving) return
  const first = waiting.entries().next()
  if (first.done) return
  const [caller, queue] = first.value
  const call = queue.shift()!
  waiting.delete(caller)
  if (queue.length > 0) waiting.set(caller, queue)
  serving = true
  void call.run().then((outcome) => {
    serving = false
    call.resolve(outcome)
    serveNext()
  })
}

// The thread may fail to start at all (`new Worker` throws ERR_WORKER_INIT_FAILED when the process
// cannot make a thread: address space or thread limits). That call is answered `unavailable` and
// the line moves on; a throw here would leave `serving` set and every later call waiting for good.
function startCall(run: () => Promise<FormatOutcome>): Promise<FormatOutcome> {
  try {
    return run()
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err)
    return Promise.resolve({ unavailable: `the formatter thread did not start: ${why}` })
  }
}

// A little of most of Python's syntax: formatting it once compiles the WASM functions a block
// needs (V8 compiles them on first call, ~100 ms in all).
const WARM_UP = [
  'import os, sys',
  'from a import (b, c)',
  '@decorator',
  'async def f(x: int = 1, *args, **kw) -> list[str]:',
  '    """Doc."""',
  '    try:',
  '        async with g() as h:',
  "            return [y for y in x if y] or {'k': (1, 2.5, None)}",
  '    except (ValueError, KeyError) as e:',
  "        raise RuntimeError(f'{e!r}') from e",
  '    finally:',
  '        pass',
  'class C(Base, metaclass=M):',
  '    x: int = 0',
  '    def m(self):',
  '        while self.x < 10 and not False:',
  '            self.x += 1; del self.y[0]',
  '        lambda *a: a[1:2, ...]',
  'with open("p") as fh, other(): print(fh.read(), sep="", end="\\n")',
  'match v:',
  '    case [1, *rest] | {"a": _}: global z',
  'await read_file("a.txt", n=2)',
  '',
].join('\n')

// The server starts the thread, loads ruff and warms it while it starts, so the first block a
// person opens is formatted as fast as the rest (a cold thread takes a second or more).
export function warmFormatterThread(): void {
  void formatOffThread(WARM_UP, LOAD_LIMIT_MS, Number.MAX_SAFE_INTEGER, { maxWaitMs: LOAD_LIMIT_MS })
}
