// The bytes queued for every event stream of a server, together. Each stream is bounded on its
// own (maxQueuedBytes), but one session may have as many streams as the connection caps allow,
// and each holds its own queue: without a bound on them together, N stalled readers hold N times
// the per-stream bound of sandbox output. Every byte a stream queues is charged here, against a
// server-wide bound and a bound per session; when a frame does not fit, the stream holding the
// most (of the session, or of the session holding the most) is dropped first: the reader furthest behind,
// and dropping it is what a single stream past its own bound gets (it reconnects with
// Last-Event-ID and replays from the log). A reader that keeps up holds almost nothing, so
// stalled readers cannot push it out.
// Plain answers and the MCP transport's event streams are charged here too (answer-budget.ts), as
// holders grouped with the session their URL names: one server-wide number for everything the
// server holds for clients that stop reading.

export const DEFAULT_MAX_QUEUED_BYTES_TOTAL = 64 * 1024 * 1024
export const DEFAULT_MAX_QUEUED_BYTES_PER_SESSION = 32 * 1024 * 1024

// A holder that handed bytes to its socket this recently is draining: its client reads (a plain
// answer's reader, answer-budget.ts). Within its session's share, a draining holder is not closed
// to make room; one that made no progress for this long is stalled, and is (seventeenth outsider
// pass: a client reading a 30 MiB attachment on a slow link was closed for 6 that read the head).
export const DRAINING_WINDOW_MS = 10_000

// Progress alone is not draining (eighteenth outsider pass): a reader that took one 256 KiB piece
// every few seconds stayed "draining" for minutes while it pinned a whole answer, and two such
// readers of two sessions held 56 of the server's 64 MiB and locked every other session out. A
// holder that tracks its rate is draining only if, at the rate its socket took bytes over the last
// window, it would hand what it holds to the kernel within this long: a slower reader of a large
// answer is stalled (closed when room is needed; it may ask again), a reader that keeps up is not.
export const DRAINING_WITHIN_MS = 20_000

// What a holder may hold and still push a draining one of its own session out (eighteenth outsider
// pass): one download of a session filled its share, and the session's event stream, which keeps
// up and holds almost nothing, was dropped for its next frame, and the block's POST answer was cut
// after its head. An event stream with less than this queued (a reader that keeps up; the frame
// it asks for is bounded by the block caps), and an answer whose whole charge stays under it,
// takes the room from the draining holders of its session (the largest first). A fraction of the
// session's share, so that a large answer asked while another is read is still the one refused.
export const smallShare = (maxSessionBytes: number): number => Math.floor(maxSessionBytes / 32)

export type BudgetedStream = {
  readonly sessionId: string
  // What this stream has queued and not yet handed to its socket (kept by the budget).
  bytes: number
  // Ends the stream as one past its own bound is ended; releases its bytes (release()).
  drop(): void
  // When it last handed bytes to its socket (Date.now()), for holders that track it (plain
  // answers); a holder without it is never draining (event streams: a reader that keeps up holds
  // almost nothing, so the stream holding the most is the one behind).
  progressedAt?: number
  // Bytes per second its socket took lately (DRAINING_WITHIN_MS), for holders that track it (plain
  // answers: Infinity while a new answer has had no chance to be read yet).
  rate?(now: number): number
}

const draining = (s: BudgetedStream, now: number): boolean =>
  s.progressedAt !== undefined &&
  now - s.progressedAt < DRAINING_WINDOW_MS &&
  (s.rate === undefined || s.bytes <= (s.rate(now) * DRAINING_WITHIN_MS) / 1000)

export class SseBudget {
  private total = 0
  private readonly bySession = new Map<string, Set<BudgetedStream>>()
  private readonly sessionBytes = new Map<string, number>()

  constructor(
    readonly maxBytes = DEFAULT_MAX_QUEUED_BYTES_TOTAL,
    readonly maxSessionBytes = DEFAULT_MAX_QUEUED_BYTES_PER_SESSION,
  ) {}

  get queuedBytes(): number {
    return this.total
  }

  register(stream: BudgetedStream): void {
    let set = this.bySession.get(stream.sessionId)
    if (!set) {
      set = new Set()
      this.bySession.set(stream.sessionId, set)
    }
    set.add(stream)
  }

  // The stream ended (dropped, closed, cancelled): its queued bytes are no longer held.
  unregister(stream: BudgetedStream): void {
    this.release(stream, stream.bytes)
    const set = this.bySession.get(stream.sessionId)
    set?.delete(stream)
    if (set?.size === 0) {
      this.bySession.delete(stream.sessionId)
      this.sessionBytes.delete(stream.sessionId)
    }
  }

  // Charges n bytes to the stream if they fit, dropping the streams furthest behind to make room.
  // False when they cannot fit even so (the stream itself is the one holding the most): the
  // caller drops it. `force` charges them anyway once no other stream holds more to drop: a
  // replay's one frame to a stream with nothing queued, so that a reconnect always makes progress
  // (its size is bounded by the block caps). It still drops the streams furthest behind first, or
  // each new stalled reader would add one frame past the bound.
  // A draining holder (progressedAt, at a rate that empties it soon) is not dropped for its own
  // session's bound: the one asking does not fit instead, unless it is small (a stream that keeps
  // up, a small answer: smallShare), which takes the room from the largest draining holder. For the server's bound it is, once no stalled holder is left, if its
  // session holds more than the asking one would: a session's readers keep its share, not more.
  take(stream: BudgetedStream, n: number, force = false): boolean {
    const now = Date.now()
    while ((this.sessionBytes.get(stream.sessionId) ?? 0) + n > this.maxSessionBytes) {
      const among = this.bySession.get(stream.sessionId)
      if (this.evict(stream, among, now, false)) continue
      if (this.small(stream, n) && this.evict(stream, among, now, true)) continue
      if (force) break
      return false
    }
    while (this.total + n > this.maxBytes) {
      if (!this.evictServerWide(stream, n, now)) {
        if (force) break
        return false
      }
    }
    stream.bytes += n
    this.total += n
    this.sessionBytes.set(stream.sessionId, (this.sessionBytes.get(stream.sessionId) ?? 0) + n)
    return true
  }

  // An event stream that keeps up (little queued), or an answer small on the whole: its session's
  // draining holders give it room (smallShare).
  private small(stream: BudgetedStream, n: number): boolean {
    const small = smallShare(this.maxSessionBytes)
    return stream.progressedAt === undefined ? stream.bytes <= small : stream.bytes + n <= small
  }

  // The stream handed n queued bytes to its socket.
  release(stream: BudgetedStream, n: number): void {
    if (n <= 0) return
    stream.bytes -= n
    this.total -= n
    const left = (this.sessionBytes.get(stream.sessionId) ?? 0) - n
    if (left > 0) this.sessionBytes.set(stream.sessionId, left)
    else this.sessionBytes.delete(stream.sessionId)
  }

  // For the server's bound, the session holding the most gives up its stream furthest behind
  // first: many stalled streams of one session (or a few sessions) each holding a little must not
  // push out another session's single reader that holds more than any one of them.
  // Stalled holders go first, then the draining ones of sessions holding more than the asking
  // session would.
  private evictServerWide(asking: BudgetedStream, n: number, now: number): boolean {
    const heaviest = [...this.sessionBytes.entries()].sort((a, b) => b[1] - a[1])
    for (const [sessionId] of heaviest) {
      if (this.evict(asking, this.bySession.get(sessionId), now, false)) return true
    }
    const asks = (this.sessionBytes.get(asking.sessionId) ?? 0) + n
    for (const [sessionId, bytes] of heaviest) {
      if (sessionId === asking.sessionId || bytes <= asks) continue
      if (this.evict(asking, this.bySession.get(sessionId), now, true)) return true
    }
    return false
  }

  // Drops the stream of `among` holding the most (of the stalled ones, unless `drainingToo`),
  // unless that is `asking` itself (or none holds anything): then nothing is dropped and the
  // caller's frame does not fit.
  private evict(
    asking: BudgetedStream,
    among: Iterable<BudgetedStream> | undefined,
    now: number,
    drainingToo: boolean,
  ): boolean {
    let worst: BudgetedStream | undefined
    for (const s of among ?? []) {
      if (s !== asking && !drainingToo && draining(s, now)) continue
      if (!worst || s.bytes > worst.bytes) worst = s
    }
    if (!worst || worst === asking || worst.bytes === 0 || worst.bytes <= asking.bytes) return false
    worst.drop()
    // drop() unregisters it; should it not have, its bytes are let go here so the loop ends.
    if (worst.bytes > 0) this.unregister(worst)
    return true
  }
}
