import type { IncomingMessage, ServerResponse } from 'node:http'
import { type BudgetedStream, DRAINING_WINDOW_MS, type SseBudget } from './sse-budget.js'

// What the server holds for a client that stops reading, beyond the event streams (sixteenth
// outsider pass). A plain answer (a block of 1 MiB of output, JSON-escaped to ~6 MB; an
// attachment of up to 32 MiB) is written to the socket at once, and what the kernel does not take
// stays in this process until the client reads it: 24 connections asking for one stored block
// and reading only the head held 615 MiB, and nothing bounded how many did. So every answer's
// unsent bytes are charged to the server's one budget (sse-budget.ts, shared with the event
// streams: one server-wide number), grouped by the session the URL names (the same group as that
// session's streams, so its bound covers both), from the moment they are written until the socket
// has handed them to the kernel. To make room, the stalled connections holding the most are closed
// first, the oldest on a tie, exactly as a stalled event-stream reader is dropped. Seventeenth
// pass: a large answer was charged whole until its last byte, so a client reading a 30 MiB
// attachment on a slow link held as much as one that stopped, and was closed first. Its charge is
// now what is still queued (fed in pieces, below), and a connection whose socket took a piece
// lately is draining: not closed for its session's bound (sse-budget.ts); the answer asking is
// refused instead.
//
// An answer is held once: a string body is turned into one Buffer before it is written (Node would
// otherwise keep the string and make its own copy of it for the socket).

// Responses whose body charges the budget itself (the event streams, sse.ts): their writes are not
// charged twice.
const selfBudgeted = new WeakSet<ServerResponse>()
export const budgetsItself = (res: ServerResponse): void => {
  selfBudgeted.add(res)
}

// Strings from this length are written as a Buffer made once (below it, Node's copy is small).
export const AS_BUFFER_FROM = 16 * 1024

// One response's charge: its bytes queued here or in its socket's write buffer.
export class AnswerCharge {
  private readonly me: BudgetedStream
  private registered = false
  private gone = false
  private readonly onGone: Array<() => void> = []
  // What its socket took lately: [when, bytes], oldest first, none older than DRAINING_WINDOW_MS
  // (a piece at most every few milliseconds: a short list). Its rate decides whether it drains.
  private readonly took: Array<[number, number]> = []
  private startedAt = Date.now()
  private tookAny = false

  constructor(
    private readonly budget: SseBudget,
    group: string,
    private readonly res: ServerResponse,
  ) {
    this.me = {
      sessionId: group,
      bytes: 0,
      drop: () => this.drop(),
      progressedAt: Date.now(),
      rate: (now) => this.rate(now),
    }
    const end = () => this.end()
    res.once('finish', end)
    res.once('close', end)
  }

  get ended(): boolean {
    return this.gone
  }

  // Charges n bytes. `force`: charged after closing the connections holding more to make room,
  // whatever is left (true). Otherwise false when they do not fit even so: the caller drops this
  // connection.
  take(n: number, force: boolean): boolean {
    if (this.gone) return false
    if (n <= 0) return true
    if (!this.registered) {
      this.registered = true
      // Its clock starts with its first bytes: a connection that never reads is stalled once
      // the window passed, whenever it was opened.
      this.me.progressedAt = Date.now()
      this.startedAt = this.me.progressedAt
      this.budget.register(this.me)
    }
    return this.budget.take(this.me, n, force)
  }

  // n bytes are no longer held (the socket took them, or a reader of ours handed them on).
  release(n: number): void {
    if (this.gone) return
    this.me.progressedAt = Date.now()
    this.budget.release(this.me, Math.min(n, this.me.bytes))
  }

  // The socket took n bytes (released or not: a piece of a buffer kept for the rest): the client
  // is reading, at the rate these samples tell.
  progressed(n: number): void {
    if (this.gone) return
    const now = Date.now()
    this.me.progressedAt = now
    this.tookAny = true
    this.took.push([now, n])
    this.forget(now)
  }

  private forget(now: number): void {
    while (this.took.length > 0 && now - this.took[0]![0] >= DRAINING_WINDOW_MS) this.took.shift()
  }

  // Bytes a second the socket took over the last window (over its life, at least a second, while
  // younger). Before its socket took anything, during its first window, it has had no chance to
  // be read: not judged yet (Infinity); past it, a client that read nothing is stalled.
  private rate(now: number): number {
    this.forget(now)
    let sum = 0
    for (const [, n] of this.took) sum += n
    if (sum === 0) return !this.tookAny && now - this.startedAt < DRAINING_WINDOW_MS ? Infinity : 0
    const span = Math.max(1000, Math.min(DRAINING_WINDOW_MS, now - this.startedAt))
    return (sum * 1000) / span
  }

  // Runs once the connection is closed or the answer finished (at once if it already is).
  whenGone(fn: () => void): void {
    if (this.gone) fn()
    else this.onGone.push(fn)
  }

  // Past the budget: the connection closes and with it what its socket buffers.
  drop(): void {
    this.end()
    this.res.destroy()
  }

  private end(): void {
    if (this.gone) return
    this.gone = true
    if (this.registered) this.budget.unregister(this.me)
    for (const fn of this.onGone.splice(0)) fn()
  }
}

const charges = new WeakMap<ServerResponse, AnswerCharge>()
export const answerCharge = (res: ServerResponse): AnswerCharge | undefined => charges.get(res)

const SESSION_PATH = /^\/v1\/sessions\/([^/]+)/

// The path the router sees: @hono/node-server parses an absolute-form target (`GET http://host/v1/
// sessions/A/... HTTP/1.1`, RFC 9112 §3.2.2) as that URL, and any other as `http://<Host><target>`,
// dot segments resolved. The group is taken from the same parse (seventeenth outsider pass: the
// raw target in absolute form, or with `/../`, named no session or another one, and its answer
// escaped its session's share).
function routedPath(target: string): string | undefined {
  try {
    if (/^https?:\/\//i.test(target)) return new URL(target).pathname
    // A fixed authority: the Host header cannot change the path, and `//x/...` stays a path.
    if (target.startsWith('/')) return new URL(`http://h${target}`).pathname
  } catch {
    // Not a URL the router takes either (it answers 400).
  }
  return undefined
}

// The group an answer is charged to: the session its URL names (with that session's event
// streams), an MCP session's own, or a group of its own.
let anonymous = 0
export function answerGroup(req: IncomingMessage): string {
  const m = SESSION_PATH.exec(routedPath(req.url ?? '') ?? '')
  if (m) {
    try {
      return decodeURIComponent(m[1]!)
    } catch {
      return m[1]!
    }
  }
  const mcp = req.headers['mcp-session-id']
  if (typeof mcp === 'string') return `mcp:${mcp}`
  anonymous = (anonymous + 1) % Number.MAX_SAFE_INTEGER
  return `answer:${anonymous}`
}

type Cb = (err?: Error | null) => void

// A large chunk goes to the socket in pieces of this size, one after the other: its charge is
// what is still queued here (released piece by piece as the client reads, not all at the end),
// and each piece the socket takes is progress (sse-budget.ts: a draining holder keeps its place).
export const PIECE_BYTES = 256 * 1024

// Charges every byte written to `res` until the socket has taken it (the write's callback; the
// end's bytes until 'finish'). A chunk larger than a piece is queued here and fed to the socket
// piece by piece; once what is left of it is half what it was, it is copied out and the old buffer
// released, so a chunk stays charged exactly for the buffer it pins (the whole, then each copy; a
// piece the socket took counts as progress only), never less than what the process holds for it
// (the merge found a charge per piece let 24 stalled readers pin 69 MiB under the 64 MiB budget).
// Bytes that do not fit the budget (sse-budget.ts: the holders in the way are draining) close the
// connection once its head is out: the client sees a truncated answer, not a misleading one.
export function budgetAnswer(res: ServerResponse, budget: SseBudget, group: string): AnswerCharge {
  const charge = new AnswerCharge(budget, group, res)
  charges.set(res, charge)
  const write = res.write.bind(res) as (...args: unknown[]) => boolean
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse
  const split = (args: unknown[]) => {
    let [chunk, encoding, cb] = args as [unknown, unknown, unknown]
    if (typeof chunk === 'function') {
      cb = chunk
      chunk = undefined
      encoding = undefined
    } else if (typeof encoding === 'function') {
      cb = encoding
      encoding = undefined
    }
    if (typeof chunk === 'string' && chunk.length >= AS_BUFFER_FROM) {
      chunk = Buffer.from(chunk, (encoding as BufferEncoding | undefined) ?? 'utf8')
      encoding = undefined
    }
    const n =
      typeof chunk === 'string'
        ? Buffer.byteLength(chunk, (encoding as BufferEncoding | undefined) ?? 'utf8')
        : chunk instanceof Uint8Array
          ? chunk.byteLength
          : 0
    return { chunk, encoding, cb: cb as Cb | undefined, n }
  }

  // The head goes out (its status was decided), then the connection closes.
  let refused = false
  const refuse = (cb: Cb | undefined) => {
    refused = true
    queue.length = 0
    if (cb) process.nextTick(cb, new Error('answer past the server budget'))
    if (charge.ended) return
    try {
      res.flushHeaders()
    } catch {
      // No head to send: the connection closes all the same.
    }
    const sock = res.socket
    if (sock && !sock.destroyed && sock.writableLength > 0) sock.write(Buffer.alloc(0), () => charge.drop())
    else charge.drop()
  }

  // Chunks waiting for the one being fed in pieces (order kept).
  type Item = {
    chunk: unknown
    encoding: unknown
    cb: Cb | undefined
    n: number
    last: boolean
    whole: number
  }
  const queue: Item[] = []
  let feeding = false
  let owesDrain = false
  const feed = (): void => {
    const item = queue[0]
    if (!item || refused || charge.ended) {
      feeding = false
      if (!item && owesDrain && !charge.ended) {
        owesDrain = false
        res.emit('drain')
      }
      return
    }
    feeding = true
    const buf = item.chunk
    if (item.n > 0 && buf instanceof Uint8Array && buf.byteLength > PIECE_BYTES) {
      const piece = buf.subarray(0, PIECE_BYTES)
      let rest = buf.subarray(PIECE_BYTES)
      // What stays charged is what stays in memory: the buffer the pieces are views of, whole,
      // until the rest is copied out (then the copy); a piece the socket took frees nothing else.
      let freed = 0
      if (rest.byteLength * 2 <= item.whole) {
        rest = Buffer.from(rest)
        // The old buffer goes once this piece, a view of it, is out.
        freed = item.whole - rest.byteLength
        item.whole = rest.byteLength
      }
      item.chunk = rest
      item.n -= piece.byteLength
      write(piece, (err?: Error | null) => {
        charge.progressed(piece.byteLength)
        if (freed > 0) charge.release(freed)
        if (err) refuse(item.cb)
        else feed()
      })
      return
    }
    queue.shift()
    if (item.last) {
      feeding = false
      // Released when the answer finishes or the connection closes (AnswerCharge).
      end(item.chunk, item.encoding, item.cb)
      return
    }
    write(item.chunk, item.encoding, (err?: Error | null) => {
      // The last of a chunk fed in pieces holds its whole buffer (or the copy) until now.
      charge.progressed(item.n)
      charge.release(Math.max(item.n, item.whole))
      item.cb?.(err)
      if (err) refuse(undefined)
      else feed()
    })
  }
  const enqueue = (item: Omit<Item, 'whole'>) => {
    queue.push({ ...item, whole: item.n })
    if (!feeding) feed()
  }

  ;(res as { write: unknown }).write = (...args: unknown[]) => {
    const { chunk, encoding, cb, n } = split(args)
    if (refused) {
      if (cb) process.nextTick(cb, new Error('answer past the server budget'))
      return false
    }
    const charged = n > 0 && !selfBudgeted.has(res)
    if (charged && !charge.take(n, false)) {
      refuse(cb)
      return false
    }
    if (!feeding && (!charged || n <= PIECE_BYTES)) {
      if (!charged) return write(chunk, encoding, cb)
      return write(chunk, encoding, (err?: Error | null) => {
        charge.progressed(n)
        charge.release(n)
        cb?.(err)
      })
    }
    // Behind a chunk being fed: the writer waits for 'drain' (emitted once the queue is out).
    owesDrain = true
    enqueue({ chunk, encoding, cb, n: charged ? n : 0, last: false })
    return false
  }
  ;(res as { end: unknown }).end = (...args: unknown[]) => {
    const { chunk, encoding, cb, n } = split(args)
    if (refused) return res
    const charged = n > 0 && !selfBudgeted.has(res)
    if (charged && !charge.take(n, false)) {
      refuse(cb)
      return res
    }
    if (!feeding && (!charged || n <= PIECE_BYTES)) return end(chunk, encoding, cb)
    enqueue({ chunk, encoding, cb, n: charged ? n : 0, last: true })
    return res
  }
  return charge
}

// An event stream someone else made (the MCP SDK's transport enqueues each message into its
// ReadableStream whatever the reader takes: no bound): read as fast as it is written, its bytes
// charged to the connection's answer until the socket asks for them, and the connection dropped
// once they pass the bounds an event stream has (`maxQueuedBytes` of its own, and the budget's).
export function boundedStream(
  body: ReadableStream<Uint8Array>,
  charge: AnswerCharge,
  maxQueuedBytes: number,
): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  const queue: Uint8Array[] = []
  let queued = 0
  let done = false
  let failed: unknown
  let stopped = false
  let wake: (() => void) | undefined
  const stop = () => {
    if (stopped) return
    stopped = true
    queue.length = 0
    charge.release(queued)
    queued = 0
    reader.cancel().catch(() => undefined)
    wake?.()
  }
  charge.whenGone(stop)
  void (async () => {
    try {
      for (;;) {
        const next = await reader.read()
        if (stopped) return
        if (next.done) {
          done = true
          break
        }
        const n = next.value.byteLength
        if (queued + n > maxQueuedBytes || !charge.take(n, false)) {
          // Too far behind: the connection closes (stop runs, the source is cancelled).
          charge.drop()
          return
        }
        queue.push(next.value)
        queued += n
        wake?.()
      }
    } catch (err) {
      failed = err ?? new Error('event stream failed')
    }
    wake?.()
  })()
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const give = (): boolean => {
          const chunk = queue.shift()
          if (chunk) {
            queued -= chunk.byteLength
            // From here the response's write charges it, until the socket takes it.
            charge.release(chunk.byteLength)
            controller.enqueue(chunk)
          } else if (failed !== undefined) controller.error(failed)
          else if (stopped) controller.error(new Error('event stream client fell too far behind'))
          else if (done) controller.close()
          else return false
          return true
        }
        if (give()) return
        return new Promise<void>((resolve) => {
          wake = () => {
            if (!give()) return
            wake = undefined
            resolve()
          }
        })
      },
      cancel() {
        stop()
      },
    },
    { highWaterMark: 0 },
  )
}
