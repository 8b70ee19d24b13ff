import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { constraintViolation } from './constraint.js'
import { decodeJson, encodeJson, parseJsonValue } from './json.js'
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
    this.write(sessionId, snapshot)
    return this.get(sessionId)!
  }

  // Stores the snapshot unless the row already holds exactly this text; true when it wrote.
  // The guest sends its snapshot after every block and it rarely changes: an unchanged one
  // costs a read instead of a row rewrite (fewer WAL pages for the block's fsync). The stored
  // row is then still the snapshot of the latest block, so a reopen restores the same defs.
  write(sessionId: string, snapshot: unknown): boolean {
    return this.writeText(sessionId, this.encode(snapshot))
  }

  // The stored text of a snapshot, or db.invalid-input: a caller can check a snapshot before
  // its transaction writes anything (src/engine/persist-outcome.ts).
  encode(snapshot: unknown): string {
    return encodeJson(parseJsonValue(snapshot, 'defs.put'))
  }

  // write() for a snapshot already encode()d. Any JSON text is stored as given: the one
  // refusal left is a missing session.
  writeText(sessionId: string, text: string): boolean {
    const same = this.ctx.sql
      .pluck('SELECT snapshot = ? FROM session_defs WHERE session_id = ?')
      .get(text, sessionId) as number | boolean | undefined
    // SQLite answers a comparison with 1/0, PostgreSQL with true/false.
    if (same === 1 || same === true) return false
    try {
      this.ctx.sql
        .get(
          `INSERT INTO session_defs (session_id, snapshot, updated_at) VALUES (?, ?, ?)
           ON CONFLICT (session_id) DO UPDATE SET snapshot = excluded.snapshot, updated_at = excluded.updated_at`,
        )
        .run(sessionId, text, this.ctx.now())
    } catch (err) {
      if (constraintViolation(err) === 'foreign-key') {
        throw new VisError('db.session-not-found', `No session with id ${sessionId}.`, { sessionId })
      }
      throw err
    }
    return true
  }

  get(sessionId: string): DefsSnapshot | undefined {
    const row = this.ctx.sql.get('SELECT * FROM session_defs WHERE session_id = ?').get(sessionId)
    return row === undefined ? undefined : DefsSnapshotSchema.parse(row)
  }
}
