import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { decodeJson, encodeJson, JsonValueSchema, parseInput } from './json.js'
import type { RepoContext } from './statements.js'

// A session's defs snapshot: what the next block in a reopened session restores first.
// Its content is the session engine's business; it is stored whole and replaced whole.
const DefsRowSchema = z.object({
  session_id: z.string(),
  snapshot: z.string(),
  updated_at: z.number().int(),
})

export const DefsSnapshotSchema = DefsRowSchema.transform((r) => ({
  sessionId: r.session_id,
  snapshot: decodeJson(r.snapshot),
  updatedAt: r.updated_at,
}))
export type DefsSnapshot = z.output<typeof DefsSnapshotSchema>

export class DefsRepo {
  constructor(private readonly ctx: RepoContext) {}

  put(sessionId: string, snapshot: unknown): DefsSnapshot {
    const value = parseInput(JsonValueSchema, snapshot, 'defs.put')
    try {
      this.ctx.sql
        .get(
          `INSERT INTO session_defs (session_id, snapshot, updated_at) VALUES (?, ?, ?)
           ON CONFLICT (session_id) DO UPDATE SET snapshot = excluded.snapshot, updated_at = excluded.updated_at`,
        )
        .run(sessionId, encodeJson(value), this.ctx.now())
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
        throw new VisError('db.session-not-found', `No session with id ${sessionId}.`, { sessionId })
      }
      throw err
    }
    return this.get(sessionId)!
  }

  get(sessionId: string): DefsSnapshot | undefined {
    const row = this.ctx.sql.get('SELECT * FROM session_defs WHERE session_id = ?').get(sessionId)
    return row === undefined ? undefined : DefsSnapshotSchema.parse(row)
  }
}
