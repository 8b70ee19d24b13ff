import { z } from 'zod'
import { constraintViolation } from '../persistence/constraint.js'
import { type Db, dialectOf, Statements } from '../persistence/statements.js'
import { VisError } from '../util/errors.js'

export const DraftKindSchema = z.enum(['copy', 'blank'])
export const DraftStatusSchema = z.enum(['active', 'applied', 'abandoned'])

const DraftRowSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  label: z.string(),
  kind: DraftKindSchema,
  root: z.string(),
  dir: z.string(),
  base_at: z.number(),
  status: DraftStatusSchema,
  reason: z.string().nullable(),
  ended_at: z.number().int().nullable(),
  created_at: z.number().int(),
})

export const DraftRecordSchema = DraftRowSchema.transform((r) => ({
  id: r.id,
  sessionId: r.session_id,
  label: r.label,
  kind: r.kind,
  root: r.root,
  dir: r.dir,
  // The draft's base: the ctime clock reading when it began (ms); a real file whose ctime
  // is not older changed since.
  baseAt: r.base_at,
  status: r.status,
  reason: r.reason,
  endedAt: r.ended_at,
  createdAt: r.created_at,
}))
export type DraftRecord = z.output<typeof DraftRecordSchema>

// The drafts table (migration 3): at most one active draft per session; ended ones stay
// as history with their reason.
export class DraftsRepo {
  // Prepared once: active() runs twice per block (the block.started event and the refresh after
  // it), and preparing was most of its cost.
  private readonly sql: Statements

  constructor(db: Db) {
    this.sql = new Statements(db)
  }

  create(d: Omit<DraftRecord, 'status' | 'reason' | 'endedAt' | 'createdAt'>): DraftRecord {
    try {
      this.sql
        .get(
          `INSERT INTO drafts (id, session_id, label, kind, root, dir, base_at, status, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?)`,
        )
        .run(d.id, d.sessionId, d.label, d.kind, d.root, d.dir, d.baseAt, Date.now())
    } catch (err) {
      if (constraintViolation(err) === 'unique') {
        throw new VisError(
          'draft.exists',
          `session ${d.sessionId} is already in a draft; apply or abandon it first`,
          {
            sessionId: d.sessionId,
          },
        )
      }
      throw err
    }
    return this.require(d.id)
  }

  require(id: string): DraftRecord {
    const row = this.sql.get('SELECT * FROM drafts WHERE id = ?').get(id)
    if (row === undefined) throw new VisError('draft.not-found', `no draft with id ${id}`, { draftId: id })
    return DraftRecordSchema.parse(row)
  }

  active(sessionId: string): DraftRecord | undefined {
    const row = this.sql.get("SELECT * FROM drafts WHERE session_id = ? AND status = 'active'").get(sessionId)
    return row === undefined ? undefined : DraftRecordSchema.parse(row)
  }

  list(sessionId: string): DraftRecord[] {
    return (
      this.sql
        // Creation order: SQLite's rowid breaks ties within a millisecond; PostgreSQL has no rowid and
        // ids are random, so there the tie-break is the id (one active draft per session keeps ties rare).
        .get(
          `SELECT * FROM drafts WHERE session_id = ? ORDER BY created_at, ${dialectOf(this.sql.db) === 'postgres' ? 'id' : 'rowid'}`,
        )
        .all(sessionId)
        .map((r) => DraftRecordSchema.parse(r))
    )
  }

  end(id: string, status: 'applied' | 'abandoned', reason: string | null): DraftRecord {
    this.sql
      .get("UPDATE drafts SET status = ?, reason = ?, ended_at = ? WHERE id = ? AND status = 'active'")
      .run(status, reason, Date.now(), id)
    return this.require(id)
  }
}
