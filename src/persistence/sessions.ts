import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { constraintViolation } from './constraint.js'
import { isSessionRow } from './fast-shapes.js'
import { newId } from './ids.js'
import { decodeJson, encodeJson, type JsonValue, JsonValueSchema, parseInput } from './json.js'
import type { RepoContext } from './statements.js'

const SessionRowSchema = z.object({
  id: z.string(),
  title: z.string().nullable(),
  policy: z.string(),
  created_at: z.number().int(),
  closed_at: z.number().int().nullable(),
  event_seq: z.number().int(),
})

export type SessionRow = z.infer<typeof SessionRowSchema>

const sessionFromRow = (r: SessionRow) => ({
  id: r.id,
  title: r.title,
  policy: decodeJson(r.policy),
  createdAt: r.created_at,
  closedAt: r.closed_at,
  lastEventSeq: r.event_seq,
})
export const SessionSchema = SessionRowSchema.transform(sessionFromRow)
// SessionSchema.parse, by hand for a well-formed row (src/persistence/fast-shapes.ts).
export const parseSessionRow = (row: unknown): Session =>
  isSessionRow(row) ? sessionFromRow(row) : SessionSchema.parse(row)
export type Session = z.output<typeof SessionSchema>

export const CreateSessionInputSchema = z.object({
  id: z.string().min(1).max(200).optional(),
  title: z.string().max(1000).nullable().optional(),
  // The policy's own shape belongs to src/sessions; here it is stored as given.
  policy: JsonValueSchema.optional(),
  // A sub_loop child's top session (the root of its parent chain): the family whose stored
  // attachments are bounded together (attachments.ts familyBytes).
  familyId: z.string().min(1).max(200).optional(),
})
export type CreateSessionInput = z.input<typeof CreateSessionInputSchema>

export const ListSessionsInputSchema = z.object({
  state: z.enum(['open', 'closed', 'all']).default('all'),
  limit: z.number().int().min(1).max(10_000).default(100),
  offset: z.number().int().min(0).default(0),
})
export type ListSessionsInput = z.input<typeof ListSessionsInputSchema>

export class SessionsRepo {
  constructor(private readonly ctx: RepoContext) {}

  create(input: CreateSessionInput = {}): Session {
    const v = parseInput(CreateSessionInputSchema, input, 'sessions.create')
    const id = v.id ?? newId('ses')
    try {
      this.ctx.sql
        .get('INSERT INTO sessions (id, title, policy, created_at, family_id) VALUES (?, ?, ?, ?, ?)')
        .run(id, v.title ?? null, encodeJson(v.policy ?? {}), this.ctx.now(), v.familyId ?? null)
    } catch (err) {
      if (constraintViolation(err) === 'primary-key') {
        throw new VisError('db.session-exists', `A session with id ${id} already exists.`, { sessionId: id })
      }
      throw err
    }
    return this.require(id)
  }

  // The top session of `id`'s family (`id` itself for a session no sub_loop made), or undefined
  // when there is no such session.
  familyOf(id: string): string | undefined {
    const v = this.ctx.sql.pluck('SELECT coalesce(family_id, id) FROM sessions WHERE id = ?').get(id)
    return v === undefined || v === null ? undefined : String(v)
  }

  get(id: string): Session | undefined {
    const row = this.ctx.sql.get('SELECT * FROM sessions WHERE id = ?').get(id)
    return row === undefined ? undefined : parseSessionRow(row)
  }

  // A session's closed_at (null: open), or undefined when there is no such session: what
  // accepting a block checks, without reading and decoding the whole row (its policy is JSON).
  closedAt(id: string): number | null | undefined {
    const v = this.ctx.sql.pluck('SELECT closed_at FROM sessions WHERE id = ?').get(id)
    if (v === undefined || v === null || Number.isInteger(v)) return v as number | null | undefined
    return this.require(id).closedAt // a malformed row: the schema's error
  }

  require(id: string): Session {
    const s = this.get(id)
    if (!s) throw new VisError('db.session-not-found', `No session with id ${id}.`, { sessionId: id })
    return s
  }

  // Newest first: what a person listing sessions wants to see.
  list(input: ListSessionsInput = {}): Session[] {
    const v = parseInput(ListSessionsInputSchema, input, 'sessions.list')
    const where =
      v.state === 'open'
        ? 'WHERE closed_at IS NULL'
        : v.state === 'closed'
          ? 'WHERE closed_at IS NOT NULL'
          : ''
    return this.ctx.sql
      .get(`SELECT * FROM sessions ${where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
      .all(v.limit, v.offset)
      .map((row) => parseSessionRow(row))
  }

  count(state: 'open' | 'closed' | 'all' = 'all'): number {
    const where =
      state === 'open' ? 'WHERE closed_at IS NULL' : state === 'closed' ? 'WHERE closed_at IS NOT NULL' : ''
    return this.ctx.sql.pluck(`SELECT count(*) FROM sessions ${where}`).get() as number
  }

  setTitle(id: string, title: string | null): Session {
    const r = this.ctx.sql.get('UPDATE sessions SET title = ? WHERE id = ?').run(title, id)
    if (r.changes === 0) this.require(id)
    return this.require(id)
  }

  // A session's policy changed at run time (only ever narrowed: Session.setNetwork): stored so
  // that its sub_loop children and a later host process reopening it start from the narrowed one.
  setPolicy(id: string, policy: JsonValue): Session {
    const v = parseInput(JsonValueSchema, policy, 'sessions.setPolicy')
    const r = this.ctx.sql.get('UPDATE sessions SET policy = ? WHERE id = ?').run(encodeJson(v), id)
    if (r.changes === 0) this.require(id)
    return this.require(id)
  }

  // Closing keeps the history; only delete() removes it. Closing twice keeps the first time.
  close(id: string): Session {
    this.ctx.sql
      .get('UPDATE sessions SET closed_at = ? WHERE id = ? AND closed_at IS NULL')
      .run(this.ctx.now(), id)
    return this.require(id)
  }

  // Removes the session and, by cascade, everything it owns. Attachment files in the blob store
  // stay until AttachmentsRepo.collectGarbage() finds them unreferenced.
  delete(id: string): boolean {
    return this.ctx.sql.get('DELETE FROM sessions WHERE id = ?').run(id).changes > 0
  }
}
