import type { SessionEvent, Store } from '../persistence/index.js'
import type { JsonValue } from '../persistence/json.js'
import type { EventType, EventView } from './schemas.js'

export type EventListener = (ev: EventView) => void

type PendingOutput = {
  blockId: string
  stream: 'stdout' | 'stderr'
  data: string
}
// An event that waits in the batch for the next commit instead of paying one of its own.
type PendingEvent = { type: EventType; data: JsonValue }
type Pending = PendingOutput | PendingEvent
const isOutput = (p: Pending): p is PendingOutput => 'stream' in p

export type EventLogOptions = {
  // Output chunks arriving within this window are committed together (one transaction).
  flushMs?: number
  // A pending batch this large is committed at once.
  maxBatchChars?: number
}

export const toEventView = (e: SessionEvent): EventView => ({
  id: e.seq,
  type: e.type as EventType,
  at: new Date(e.createdAt).toISOString(),
  data: e.data,
})

// A session's event log: every event is appended to the store (so a reconnecting client can
// replay it) and then handed to live listeners, synchronously and in seq order. Because the
// append and the notification happen in one tick, a reader that replays and then subscribes
// within one tick misses nothing.
export class EventLog {
  private readonly pending = new Map<string, { chunks: Pending[]; chars: number; timer: NodeJS.Timeout }>()
  private readonly listeners = new Map<string, Set<EventListener>>()
  private readonly flushMs: number
  private readonly maxBatchChars: number

  constructor(
    private readonly store: Store,
    options: EventLogOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 15
    this.maxBatchChars = options.maxBatchChars ?? 64 * 1024
  }

  // Output is batched: adjacent chunks of the same block and stream merge into one event.
  output(sessionId: string, blockId: string, stream: 'stdout' | 'stderr', data: string): void {
    const batch = this.batch(sessionId)
    const last = batch.chunks.at(-1)
    if (last && isOutput(last) && last.blockId === blockId && last.stream === stream) last.data += data
    else batch.chunks.push({ blockId, stream, data })
    batch.chars += data.length
    if (batch.chars >= this.maxBatchChars) this.flush(sessionId)
  }

  // Like append(), but the event joins the pending batch: it is stored and announced with the
  // next commit (the next event, the block's finish, or the flush timer, whichever comes
  // first), in order. block-started goes this way: a short block's start and finish then
  // share one transaction (and one set of WAL pages) instead of committing twice.
  deferred(sessionId: string, type: EventType, data: JsonValue): void {
    this.batch(sessionId).chunks.push({ type, data })
  }

  private batch(sessionId: string) {
    let batch = this.pending.get(sessionId)
    if (!batch) {
      batch = { chunks: [], chars: 0, timer: setTimeout(() => this.flush(sessionId), this.flushMs) }
      batch.timer.unref()
      this.pending.set(sessionId, batch)
    }
    return batch
  }

  // Any other event first commits the output before it, so seq order is the order things happened.
  append(sessionId: string, type: EventType, data: JsonValue): EventView | undefined {
    this.flush(sessionId)
    return this.commit(sessionId, [{ type, data }])[0]
  }

  flush(sessionId: string): void {
    const batch = this.pending.get(sessionId)
    if (!batch) return
    this.pending.delete(sessionId)
    clearTimeout(batch.timer)
    this.commit(
      sessionId,
      batch.chunks.map((c) =>
        isOutput(c) ? { type: 'output', data: { block_id: c.blockId, stream: c.stream, data: c.data } } : c,
      ),
    )
  }

  flushAll(): void {
    for (const id of [...this.pending.keys()]) this.flush(id)
  }

  subscribe(sessionId: string, fn: EventListener): () => void {
    let set = this.listeners.get(sessionId)
    if (!set) {
      set = new Set()
      this.listeners.set(sessionId, set)
    }
    set.add(fn)
    return () => {
      set.delete(fn)
      if (set.size === 0 && this.listeners.get(sessionId) === set) this.listeners.delete(sessionId)
    }
  }

  listenerCount(sessionId: string): number {
    return this.listeners.get(sessionId)?.size ?? 0
  }

  replay(
    sessionId: string,
    afterSeq: number,
    limit = 1000,
  ): { events: EventView[]; gap: boolean; lastSeq: number } {
    const r = this.store.events.replay(sessionId, afterSeq, limit)
    return { events: r.events.map(toEventView), gap: r.gap, lastSeq: r.lastSeq }
  }

  private commit(sessionId: string, events: { type: string; data: JsonValue }[]): EventView[] {
    let stored: EventView[]
    try {
      // Events wait for no fsync of their own: the commit that acknowledges a block (or the
      // next one) carries them to disk. A killed process loses none of them.
      stored = this.store.lazily(() => this.store.events.appendMany(sessionId, events)).map(toEventView)
    } catch {
      // The session was deleted or the store closed under us: there is nobody left to tell.
      return []
    }
    const set = this.listeners.get(sessionId)
    if (set) {
      for (const ev of stored) {
        for (const fn of [...set]) {
          try {
            fn(ev)
          } catch {
            // One broken listener must not stop the others.
          }
        }
      }
    }
    return stored
  }
}
