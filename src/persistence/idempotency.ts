import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { parseInput } from './json.js'
import type { RepoContext } from './statements.js'

export const IdempotencyKeySchema = z.string().min(1).max(255)

// A retried submission carrying the same key must get the first submission's block back.
// BlocksRepo.start() does the lookup and the insert in one transaction; this repo is the table.
export class IdempotencyRepo {
  constructor(private readonly ctx: RepoContext) {}

  lookup(sessionId: string, key: string): string | undefined {
    return this.ctx.sql
      .pluck('SELECT block_id FROM idempotency_keys WHERE session_id = ? AND key = ?')
      .get(sessionId, key) as string | undefined
  }

  record(sessionId: string, key: string, blockId: string): void {
    parseInput(IdempotencyKeySchema, key, 'idempotency.record')
    // DO NOTHING rather than catching the unique violation: on PostgreSQL a failed statement
    // aborts the enclosing transaction, and the lookup below must still run in it.
    const inserted = this.ctx.sql
      .get(
        `INSERT INTO idempotency_keys (session_id, key, block_id, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (session_id, key) DO NOTHING`,
      )
      .run(sessionId, key, blockId, this.ctx.now()).changes
    if (inserted === 0) {
      throw new VisError(
        'db.idempotency-conflict',
        `The idempotency key ${JSON.stringify(key)} was already used in session ${sessionId}.`,
        { sessionId, key, blockId: this.lookup(sessionId, key) },
      )
    }
  }

  // Keys only need to outlive a client's retries; old ones can go.
  pruneOlderThan(ageMs: number): number {
    return this.ctx.sql.get('DELETE FROM idempotency_keys WHERE created_at < ?').run(this.ctx.now() - ageMs)
      .changes
  }
}
