import type { Block, SessionEvent, Store } from '../persistence/index.js'
import { iso } from '../persistence/index.js'
import type { JsonValue } from '../persistence/json.js'
import { dottedEventName } from '../util/event-names.js'
import type { EventType, EventView } from './schemas.js'

export type EventListener = (ev: EventView) => void

type PendingOutput = {
  blockId: string
  stream: 'stdout' | 'stderr'
  data: string
}
// An event that waits in the batch for the next commit instead of paying one of its own. Its data
// may be a function, called when the batch is written, after the batch's block rows are stored:
// what only the stored row knows (a deferred block's position) is known by then.
type PendingEvent = { type: EventType; data: JsonValue | (() => JsonValue) }
// A block row whose INSERT waits in the batch (deferStart); `stored` gets the row as inserted.
type PendingStart = { start: Block; stored: (row: Block) => void }
type Pending = PendingOutput | PendingEvent | PendingStart
const isOutput = (p: Pending): p is PendingOutput => 'stream' in p
const isStart = (p: Pending): p is PendingStart => 'start' in p

export type EventLogOptions = {
  // Output chunks arriving within this window are committed together (one transaction).
  flushMs?: number
  // A pending batch this large is committed at once.
  maxBatchChars?: number
}

export const toEventView = (e: SessionEvent): EventView => ({
  id: e.seq,
  // Logs written before 0.2 hold kebab names (block-started); they read back dotted.
  type: dottedEventName(e.type) as EventType,
  at: iso(e.createdAt),
  data: e.data,
})

// A session's event log: every event is appended to the store (so a reconnecting client can
// replay it) and then handed to live listeners, synchronously and in seq order. Because the
// append and the notification happen in one tick, a reader that replays and then subscribes
// within one tick misses nothing. Output chunks and deferred events (block.started) wait in a
// per-session batch and are stored and announced together, in order, at the next commit.
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
  // first), in order. block.started goes this way: a short block's start and finish then
  // share one transaction (and one set of WAL pages) instead of committing twice.
  deferred(sessionId: string, type: EventType, data: JsonValue | (() => JsonValue)): void {
    this.batch(sessionId).chunks.push({ type, data })
  }

  // A block's running row joins the batch instead of committing at acceptance: for a block
  // nobody has been told about yet (a sync request) its row is then stored with its finish
  // (one commit per short block), or by the flush timer while it still runs, so a long block is
  // listed, recovered after a crash and taken over like any other. Rows are inserted in the
  // order they were deferred, before the batch's events, so positions follow submission order.
  deferStart(sessionId: string, block: Block, stored: (row: Block) => void): void {
    this.batch(sessionId).chunks.push({ start: block, stored })
  }

  // Takes a deferred block row out of the batch (its finish stores it whole), or undefined
  // when it was stored already. Any row deferred before it is stored first, for positions.
  takeStart(sessionId: string, blockId: string): PendingStart | undefined {
    const batch = this.pending.get(sessionId)
    const i = batch?.chunks.findIndex((c) => isStart(c) && c.start.id === blockId) ?? -1
    if (i < 0) return undefined
    if (batch!.chunks.slice(0, i).some(isStart)) {
      this.flush(sessionId)
      return undefined
    }
    return batch!.chunks.splice(i, 1)[0] as PendingStart
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

  // Any other event commits the pending batch with it, in one append after the batch's
  // events, so seq order is the order things happened and a block's finish stores its
  // block.started, output and block.finished with one statement set.
  append(sessionId: string, type: EventType, data: JsonValue): EventView | undefined {
    const last = this.flush(sessionId, { type, data }).at(-1)
    return last === undefined ? undefined : toEventView(last)
  }

  // The stored events, as rows: views (two ISO times each) are built only for listeners.
  flush(sessionId: string, then?: PendingEvent): SessionEvent[] {
    const batch = this.pending.get(sessionId)
    if (!batch) return then === undefined ? [] : this.commit(sessionId, [then])
    this.pending.delete(sessionId)
    clearTimeout(batch.timer)
    const starts: PendingStart[] = []
    const events: PendingEvent[] = []
    for (const c of batch.chunks) {
      if (isStart(c)) starts.push(c)
      else if (isOutput(c))
        events.push({ type: 'output', data: { block_id: c.blockId, stream: c.stream, data: c.data } })
      else events.push(c)
    }
    if (then !== undefined) events.push(then)
    return this.commit(sessionId, events, starts)
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

  private commit(
    sessionId: string,
    events: readonly PendingEvent[],
    starts: readonly PendingStart[] = [],
  ): SessionEvent[] {
    let stored: SessionEvent[]
    // Inside a caller's atomic transaction (a block's finish) the caller decides: a failure
    // here aborts its transaction too (rethrown below), so the append needs no savepoint.
    // Inside any other transaction the append is a savepoint and a failure is dropped, as alone.
    const nested = this.store.db.open && this.store.inAtomicTransaction
    try {
      // Events wait for no fsync of their own: the commit that acknowledges a block (or the
      // next one) carries them to disk. A killed process loses none of them.
      const write = () =>
        this.store.events.appendMany(
          sessionId,
          events.map((e) => ({ type: e.type, data: typeof e.data === 'function' ? e.data() : e.data })),
        )
      stored = this.store.lazily(() =>
        starts.length === 0
          ? write()
          : this.store.transaction(() => this.insert(starts, write), { nested: 'atomic' }),
      )
    } catch (err) {
      // The session was deleted or the store closed under us: there is nobody left to tell.
      // Deferred block rows go back to the front of the batch while the store is open (the
      // write lock held by another process past the busy timeout): their blocks still run and
      // must be stored, by the next flush or with their finish (which takes them out).
      if (starts.length > 0 && this.store.db.open) this.batch(sessionId).chunks.unshift(...starts)
      if (nested) throw err
      return []
    }
    const set = this.listeners.get(sessionId)
    // Listeners are not ours to vouch for: a transaction they open is a savepoint again.
    // Without a subscriber (most blocks) no view is built at all.
    if (set) this.store.withSavepoints(() => this.notify(set, stored.map(toEventView)))
    return stored
  }

  private notify(set: Set<EventListener>, stored: readonly EventView[]): void {
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

  // The deferred rows first, in order, then the batch's events: one transaction. Each deferred
  // row's Block learns its position here (the insert allocates it), before the events that
  // name it are written: its block.started event reads it (events-bridge.ts).
  private insert<T>(starts: readonly PendingStart[], then: () => T): T {
    const rows = starts.map(({ start: b }) =>
      this.store.blocks.start({ id: b.id, sessionId: b.sessionId, code: b.code, createdAt: b.createdAt }),
    )
    starts.forEach((s, i) => {
      s.start.position = rows[i]!.block.position
    })
    const out = then()
    starts.forEach((s, i) => {
      s.stored(rows[i]!.block)
    })
    return out
  }
}
