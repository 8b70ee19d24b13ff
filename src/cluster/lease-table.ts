import { z } from 'zod'
import type { Store } from '../persistence/index.js'

// Session leases in the shared store (migration 7's session_leases, the same table on SQLite and
// PostgreSQL): which node owns a live session. Every statement is portable SQL with `?`
// placeholders (the PostgreSQL backend numbers them). A lease is taken atomically with one
// conditional upsert: the row changes only when it is ours already or expired, so two nodes
// racing for an expired lease cannot both win (PostgreSQL re-checks the WHERE against the row
// the winner wrote; SQLite serialises writers).

const LeaseRowSchema = z.object({
  session_id: z.string(),
  node_id: z.string(),
  node_url: z.string(),
  // PostgreSQL hands BIGINTs back as strings.
  expires_at: z.coerce.number(),
  acquired_at: z.coerce.number(),
})

export const LeaseSchema = LeaseRowSchema.transform((r) => ({
  sessionId: r.session_id,
  nodeId: r.node_id,
  nodeUrl: r.node_url,
  expiresAt: r.expires_at,
  acquiredAt: r.acquired_at,
}))
export type Lease = z.output<typeof LeaseSchema>

export type AcquireResult =
  // Ours now; `previous` is the lease it replaced when that was another node's (a takeover).
  | { acquired: true; lease: Lease; previous?: Lease }
  // Another node holds it and its lease is valid.
  | { acquired: false; holder: Lease }

export class LeaseTable {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  holder(sessionId: string): Lease | undefined {
    const row = this.store.db.prepare('SELECT * FROM session_leases WHERE session_id = ?').get(sessionId)
    return row === undefined ? undefined : LeaseSchema.parse(row)
  }

  // Takes the session's lease for ttlMs unless another node holds a valid one.
  acquire(sessionId: string, nodeId: string, nodeUrl: string, ttlMs: number): AcquireResult {
    return this.store.transaction(() => {
      const before = this.holder(sessionId)
      const now = this.now()
      const changes = this.store.db
        .prepare(
          `INSERT INTO session_leases (session_id, node_id, node_url, expires_at, acquired_at)
           VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (session_id) DO UPDATE SET
             node_id = excluded.node_id, node_url = excluded.node_url, expires_at = excluded.expires_at,
             acquired_at = CASE WHEN session_leases.node_id = excluded.node_id
                                THEN session_leases.acquired_at ELSE excluded.acquired_at END
           WHERE session_leases.node_id = excluded.node_id OR session_leases.expires_at <= ?`,
        )
        .run(sessionId, nodeId, nodeUrl, now + ttlMs, now, now).changes
      const after = this.holder(sessionId)
      if (changes === 0 || after === undefined || after.nodeId !== nodeId) {
        return { acquired: false as const, holder: (after ?? before)! }
      }
      const previous = before !== undefined && before.nodeId !== nodeId ? before : undefined
      return { acquired: true as const, lease: after, ...(previous ? { previous } : {}) }
    })
  }

  // Extends the node's leases on the given sessions; answers the ids it still holds. A lease
  // another node took over (ours had expired) is not among them; neither is one a previous run
  // of this node left (it is not in sessionIds): those expire and are taken over like any other.
  renew(nodeId: string, sessionIds: readonly string[], ttlMs: number): Set<string> {
    const kept = new Set<string>()
    for (let i = 0; i < sessionIds.length; i += 500) {
      const chunk = sessionIds.slice(i, i + 500)
      const marks = chunk.map(() => '?').join(', ')
      const rows = this.store.transaction(() => {
        this.store.db
          .prepare(`UPDATE session_leases SET expires_at = ? WHERE node_id = ? AND session_id IN (${marks})`)
          .run(this.now() + ttlMs, nodeId, ...chunk)
        return this.store.db
          .prepare(`SELECT session_id FROM session_leases WHERE node_id = ? AND session_id IN (${marks})`)
          .all(nodeId, ...chunk) as { session_id: string }[]
      })
      for (const r of rows) kept.add(r.session_id)
    }
    return kept
  }

  // The node's row in `nodes`: where it is and that it lives (for people and dashboards; the
  // leases alone decide ownership).
  heartbeat(nodeId: string, nodeUrl: string, startedAt: number): void {
    const now = this.now()
    this.store.db
      .prepare(
        `INSERT INTO nodes (id, url, started_at, heartbeat_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET url = excluded.url, started_at = excluded.started_at,
           heartbeat_at = excluded.heartbeat_at`,
      )
      .run(nodeId, nodeUrl, startedAt, now)
  }

  // Gives a lease up (the session closed, or the node stops): the next node to be asked takes it
  // at once instead of waiting for it to expire.
  release(sessionId: string, nodeId: string): void {
    this.store.db
      .prepare('DELETE FROM session_leases WHERE session_id = ? AND node_id = ?')
      .run(sessionId, nodeId)
  }

  releaseAll(nodeId: string): number {
    return this.store.db.prepare('DELETE FROM session_leases WHERE node_id = ?').run(nodeId).changes
  }
}
