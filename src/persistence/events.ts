import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { decodeJson, encodeJson, isJsonValue, type JsonValue, JsonValueSchema, parseInput } from './json.js'
import type { RepoContext } from './statements.js'

const EventRowSchema = z.object({
  session_id: z.string(),
  seq: z.number().int(),
  type: z.string(),
  data: z.string(),
  created_at: z.number().int(),
})

export const SessionEventSchema = EventRowSchema.transform((r) => ({
  sessionId: r.session_id,
  seq: r.seq,
  type: r.type,
  data: decodeJson(r.data),
  createdAt: r.created_at,
}))
export type SessionEvent = z.output<typeof SessionEventSchema>

export const EventInputSchema = z.object({
  type: z.string().min(1).max(100),
  data: JsonValueSchema.default(null),
})
export type EventInput = z.input<typeof EventInputSchema>

// EventInputSchema's check with a fast path for the well-formed events the engine appends on
// every block; anything else goes through the schema for its precise error.
function parseEvent(e: EventInput, op: string): { type: string; data: JsonValue } {
  const { type, data } = (e ?? {}) as { type?: unknown; data?: unknown }
  if (typeof type === 'string' && type.length >= 1 && type.length <= 100) {
    if (data === undefined) return { type, data: null }
    if (isJsonValue(data)) return { type, data: data as JsonValue }
  }
  return parseInput(EventInputSchema, e, op)
}

export type Replay = {
  events: SessionEvent[]
  // Some events after `afterSeq` were pruned by retention: the client must resynchronise from state.
  gap: boolean
  // The session's newest seq, so a caller knows whether more remain past `limit`.
  lastSeq: number
}

// Did the counter, going from `from` to `to`, pass a multiple of `every` beyond `retention`?
function crossed(from: number, to: number, retention: number, every: number): boolean {
  return Math.floor((to - retention) / every) > Math.floor((from - retention) / every)
}

// Rows per INSERT statement: 5 parameters each, far below either backend's limit.
const INSERT_CHUNK = 32
// The statement text for n rows, built once per n (the statement cache is keyed by the text).
const insertTexts: string[] = []
function insertEvents(rows: number): string {
  let sql = insertTexts[rows]
  if (sql === undefined) {
    sql = `INSERT INTO session_events (session_id, seq, type, data, created_at) VALUES ${Array(rows).fill('(?, ?, ?, ?, ?)').join(', ')}`
    insertTexts[rows] = sql
  }
  return sql
}

// The SSE log. seq is per session, starts at 1, never reused; each session keeps its newest
// `retention` events so a reconnecting client can replay what it missed without the table growing.
export class EventsRepo {
  // How often (in events) a session past its retention is trimmed back to it.
  private readonly trimEvery: number

  constructor(
    private readonly ctx: RepoContext,
    readonly retention: number,
  ) {
    this.trimEvery = Math.max(1, Math.floor(retention / 8))
  }

  append(sessionId: string, event: EventInput): SessionEvent {
    return this.appendMany(sessionId, [event])[0]!
  }

  // One transaction for a batch: a burst of output chunks costs one commit.
  appendMany(sessionId: string, events: readonly EventInput[]): SessionEvent[] {
    const parsed = events.map((e, i) => parseEvent(e, `events.append[${i}]`))
    if (parsed.length === 0) return []
    return this.ctx.sql.tx(() => {
      const last = this.ctx.sql
        .pluck('UPDATE sessions SET event_seq = event_seq + ? WHERE id = ? RETURNING event_seq')
        .get(parsed.length, sessionId) as number | undefined
      if (last === undefined) {
        throw new VisError('db.session-not-found', `No session with id ${sessionId}.`, { sessionId })
      }
      const now = this.ctx.now()
      const first = last - parsed.length + 1
      // One multi-row INSERT per INSERT_CHUNK events (a block's start and finish: one
      // statement; on PostgreSQL one round trip instead of one per event).
      const values: unknown[] = []
      const out = parsed.map((e, i) => {
        values.push(sessionId, first + i, e.type, encodeJson(e.data), now)
        // The data as given (checked a JSON value above), not decoded back from its text: the
        // same value, and decoding it again was a fair part of every block's event work.
        return { sessionId, seq: first + i, type: e.type, data: e.data, createdAt: now }
      })
      for (let i = 0; i < parsed.length; i += INSERT_CHUNK) {
        const rows = Math.min(INSERT_CHUNK, parsed.length - i)
        this.ctx.sql.get(insertEvents(rows)).run(...values.slice(i * 5, (i + rows) * 5))
      }
      // Seqs start at 1: until a session has more events than the retention there is nothing to
      // trim. Past it, the trim runs each time the counter crosses a multiple of `trimEvery`
      // (every append for a small retention), so a long session pays one DELETE per ~1/8 of its
      // retention instead of one, and a page of old events, per block; in between it keeps up to
      // that many more events than the retention, never fewer.
      if (last > this.retention && crossed(first - 1, last, this.retention, this.trimEvery)) {
        this.ctx.sql
          .get('DELETE FROM session_events WHERE session_id = ? AND seq <= ?')
          .run(sessionId, last - this.retention)
      }
      return out
    })
  }

  // Events with seq > afterSeq, oldest first. afterSeq is the SSE Last-Event-ID (0 for all).
  replay(sessionId: string, afterSeq = 0, limit = 1000): Replay {
    return this.ctx.db.transaction(() => {
      const lastSeq = this.lastSeq(sessionId)
      const events = this.ctx.sql
        .get('SELECT * FROM session_events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?')
        .all(sessionId, afterSeq, limit)
        .map((row) => SessionEventSchema.parse(row))
      const oldest = events[0]?.seq ?? lastSeq + 1
      return { events, gap: oldest > afterSeq + 1, lastSeq }
    })()
  }

  lastSeq(sessionId: string): number {
    const seq = this.ctx.sql.pluck('SELECT event_seq FROM sessions WHERE id = ?').get(sessionId) as
      | number
      | undefined
    if (seq === undefined)
      throw new VisError('db.session-not-found', `No session with id ${sessionId}.`, { sessionId })
    return seq
  }
}
