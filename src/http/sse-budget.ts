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

export type BudgetedStream = {
  readonly sessionId: string
  // What this stream has queued and not yet handed to its socket (kept by the budget).
  bytes: number
  // Ends the stream as one past its own bound is ended; releases its bytes (release()).
  drop(): void
}

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
  take(stream: BudgetedStream, n: number, force = false): boolean {
    while ((this.sessionBytes.get(stream.sessionId) ?? 0) + n > this.maxSessionBytes) {
      if (!this.evict(stream, this.bySession.get(stream.sessionId))) {
        if (force) break
        return false
      }
    }
    while (this.total + n > this.maxBytes) {
      if (!this.evictServerWide(stream)) {
        if (force) break
        return false
      }
    }
    stream.bytes += n
    this.total += n
    this.sessionBytes.set(stream.sessionId, (this.sessionBytes.get(stream.sessionId) ?? 0) + n)
    return true
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
  private evictServerWide(asking: BudgetedStream): boolean {
    const heaviest = [...this.sessionBytes.entries()].sort((a, b) => b[1] - a[1])
    for (const [sessionId] of heaviest) {
      if (this.evict(asking, this.bySession.get(sessionId))) return true
    }
    return false
  }

  // Drops the stream of `among` holding the most, unless that is `asking` itself (or none holds
  // anything): then nothing is dropped and the caller's frame does not fit.
  private evict(asking: BudgetedStream, among: Iterable<BudgetedStream> | undefined): boolean {
    let worst: BudgetedStream | undefined
    for (const s of among ?? []) if (!worst || s.bytes > worst.bytes) worst = s
    if (!worst || worst === asking || worst.bytes === 0 || worst.bytes <= asking.bytes) return false
    worst.drop()
    // drop() unregisters it; should it not have, its bytes are let go here so the loop ends.
    if (worst.bytes > 0) this.unregister(worst)
    return true
  }
}
