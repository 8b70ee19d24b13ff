import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { newId } from './ids.js'
import {
  decodeNullableJson,
  encodeJson,
  isJsonValue,
  type JsonValue,
  JsonValueSchema,
  parseInput,
} from './json.js'
import type { RepoContext } from './statements.js'

export const TurnStatusSchema = z.enum(['open', 'done', 'failed', 'cancelled'])
export type TurnStatus = z.infer<typeof TurnStatusSchema>

const TurnRowSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  position: z.number().int(),
  request: z.string().nullable(),
  status: TurnStatusSchema,
  created_at: z.number().int(),
  finished_at: z.number().int().nullable(),
})

export const TurnSchema = TurnRowSchema.transform((r) => ({
  id: r.id,
  sessionId: r.session_id,
  position: r.position,
  request: decodeNullableJson(r.request),
  status: r.status,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
}))
export type Turn = z.output<typeof TurnSchema>

const IterationRowSchema = z.object({
  id: z.string(),
  turn_id: z.string(),
  position: z.number().int(),
  created_at: z.number().int(),
})

export const IterationSchema = IterationRowSchema.transform((r) => ({
  id: r.id,
  turnId: r.turn_id,
  position: r.position,
  createdAt: r.created_at,
}))
export type Iteration = z.output<typeof IterationSchema>

export const StartTurnInputSchema = z.object({
  id: z.string().min(1).max(200).optional(),
  sessionId: z.string().min(1),
  // The request that grouped the work: the user's text, or whatever JSON the host keeps for it.
  request: JsonValueSchema.nullable().optional(),
})
export type StartTurnInput = z.input<typeof StartTurnInputSchema>
const StartTurnFieldsSchema = StartTurnInputSchema.extend({ request: z.unknown() })

export class TurnsRepo {
  constructor(private readonly ctx: RepoContext) {}

  start(input: StartTurnInput): Turn {
    // The request through the fast JSON check (zod's recursive JSON schema walked it at ~0.8 ms a
    // turn); a bad one is refused by the whole schema, in the words it always had.
    const v = parseInput(StartTurnFieldsSchema, input, 'turns.start')
    if (v.request != null && !isJsonValue(v.request)) parseInput(StartTurnInputSchema, input, 'turns.start')
    const id = v.id ?? newId('turn')
    const createdAt = this.ctx.now()
    const request = v.request == null ? null : encodeJson(v.request as JsonValue)
    // The row as written is the turn (no read back through the schema: this runs on every turn).
    const position = this.ctx.sql.tx(() => {
      this.requireSession(v.sessionId)
      const next = this.ctx.sql
        .pluck('SELECT coalesce(max(position), 0) + 1 FROM turns WHERE session_id = ?')
        .get(v.sessionId) as number
      this.ctx.sql
        .get('INSERT INTO turns (id, session_id, position, request, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(id, v.sessionId, next, request, createdAt)
      return next
    })
    return {
      id,
      sessionId: v.sessionId,
      position,
      request: decodeNullableJson(request),
      status: 'open',
      createdAt,
      finishedAt: null,
    }
  }

  finish(id: string, status: Exclude<TurnStatus, 'open'> = 'done'): Turn {
    parseInput(TurnStatusSchema.exclude(['open']), status, 'turns.finish')
    const r = this.ctx.sql
      .get("UPDATE turns SET status = ?, finished_at = ? WHERE id = ? AND status = 'open'")
      .run(status, this.ctx.now(), id)
    const turn = this.require(id)
    if (r.changes === 0 && turn.status !== status) {
      throw new VisError('db.turn-finished', `Turn ${id} is already ${turn.status}.`, {
        sessionId: turn.sessionId,
        turnId: id,
      })
    }
    return turn
  }

  get(id: string): Turn | undefined {
    const row = this.ctx.sql.get('SELECT * FROM turns WHERE id = ?').get(id)
    return row === undefined ? undefined : TurnSchema.parse(row)
  }

  // The session a turn belongs to, without reading its row through the schema (every block of a
  // turn asks).
  sessionOf(id: string): string | undefined {
    return this.ctx.sql.pluck('SELECT session_id FROM turns WHERE id = ?').get(id) as string | undefined
  }

  require(id: string): Turn {
    const t = this.get(id)
    if (!t) throw new VisError('db.turn-not-found', `No turn with id ${id}.`, { turnId: id })
    return t
  }

  listBySession(sessionId: string): Turn[] {
    return this.ctx.sql
      .get('SELECT * FROM turns WHERE session_id = ? ORDER BY position')
      .all(sessionId)
      .map((row) => TurnSchema.parse(row))
  }

  // On every agent iteration: the turn's status and session only (not its whole row through the
  // schema), in the shared transaction runner (not a fresh better-sqlite3 wrapper per call), and
  // the new row returned as written instead of read back.
  addIteration(turnId: string, id: string = newId('iter')): Iteration {
    const createdAt = this.ctx.now()
    const position = this.ctx.sql.tx(() => {
      const turn = this.ctx.sql.get('SELECT session_id, status FROM turns WHERE id = ?').get(turnId) as
        | { session_id: string; status: TurnStatus }
        | undefined
      if (!turn) throw new VisError('db.turn-not-found', `No turn with id ${turnId}.`, { turnId })
      if (turn.status !== 'open') {
        throw new VisError(
          'db.turn-finished',
          `Turn ${turnId} is ${turn.status}; it takes no new iterations.`,
          {
            sessionId: turn.session_id,
            turnId,
          },
        )
      }
      const next = this.ctx.sql
        .pluck('SELECT coalesce(max(position), 0) + 1 FROM iterations WHERE turn_id = ?')
        .get(turnId) as number
      this.ctx.sql
        .get('INSERT INTO iterations (id, turn_id, position, created_at) VALUES (?, ?, ?, ?)')
        .run(id, turnId, next, createdAt)
      return next
    })
    return { id, turnId, position, createdAt }
  }

  getIteration(id: string): Iteration | undefined {
    const row = this.ctx.sql.get('SELECT * FROM iterations WHERE id = ?').get(id)
    return row === undefined ? undefined : IterationSchema.parse(row)
  }

  listIterations(turnId: string): Iteration[] {
    return this.ctx.sql
      .get('SELECT * FROM iterations WHERE turn_id = ? ORDER BY position')
      .all(turnId)
      .map((row) => IterationSchema.parse(row))
  }

  listIterationsBySession(sessionId: string): Iteration[] {
    return this.ctx.sql
      .get(
        `SELECT i.* FROM iterations i JOIN turns t ON t.id = i.turn_id
         WHERE t.session_id = ? ORDER BY t.position, i.position`,
      )
      .all(sessionId)
      .map((row) => IterationSchema.parse(row))
  }

  private requireSession(sessionId: string): void {
    if (this.ctx.sql.get('SELECT 1 FROM sessions WHERE id = ?').get(sessionId) === undefined) {
      throw new VisError('db.session-not-found', `No session with id ${sessionId}.`, { sessionId })
    }
  }
}
