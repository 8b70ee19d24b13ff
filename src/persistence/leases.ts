import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { constraintViolation } from './constraint.js'
import { parseInput } from './json.js'
import type { RepoContext } from './statements.js'

// Session ownership for a cluster of `vis serve` nodes on one PostgreSQL (issue 19); the tables
// exist on SQLite too, where one node owns everything. A lease says which node runs a live
// session until expires_at; its owner renews all of its leases together; once a lease has
// expired any node may take it. Times are the nodes' own clocks (ms): keep them in sync (NTP)
// and the TTL well above the skew.

export const NodeSchema = z.object({
  id: z.string().min(1).max(200),
  // Where other nodes (and clients told to go there) reach this node, e.g. http://10.0.0.5:8080.
  url: z.string().min(1).max(2000),
})
export type NodeRef = z.infer<typeof NodeSchema>

const TtlSchema = z
  .number()
  .int()
  .min(1)
  .max(24 * 3600 * 1000)

const LeaseRowSchema = z.object({
  session_id: z.string(),
  node_id: z.string(),
  node_url: z.string(),
  expires_at: z.number().int(),
  acquired_at: z.number().int(),
})
export type Lease = {
  sessionId: string
  nodeId: string
  nodeUrl: string
  expiresAt: number
  acquiredAt: number
}

export type AcquireResult =
  // This node holds the lease until lease.expiresAt (new, taken over after expiry, or extended).
  | { acquired: true; lease: Lease }
  // Another node holds a live lease: send the request there.
  | { acquired: false; holder: Lease }

const NodeRowSchema = z.object({
  id: z.string(),
  url: z.string(),
  started_at: z.number().int(),
  heartbeat_at: z.number().int(),
})
export type NodeRecord = { id: string; url: string; startedAt: number; heartbeatAt: number }

function nodeRecord(row: unknown): NodeRecord {
  const r = NodeRowSchema.parse(row)
  return { id: r.id, url: r.url, startedAt: r.started_at, heartbeatAt: r.heartbeat_at }
}

function lease(row: unknown): Lease {
  const r = LeaseRowSchema.parse(row)
  return {
    sessionId: r.session_id,
    nodeId: r.node_id,
    nodeUrl: r.node_url,
    expiresAt: r.expires_at,
    acquiredAt: r.acquired_at,
  }
}

export class LeasesRepo {
  constructor(private readonly ctx: RepoContext) {}

  // Takes the session's lease for `node` when it is free, expired or already this node's (then
  // it is extended); otherwise answers with the live holder. One statement, so two nodes racing
  // for the same session cannot both win: the upsert's conflict path re-checks the row it locked.
  acquire(sessionId: string, node: NodeRef, ttlMs: number): AcquireResult {
    const n = parseInput(NodeSchema, node, 'leases.acquire')
    parseInput(TtlSchema, ttlMs, 'leases.acquire')
    const now = this.ctx.now()
    let row: unknown
    try {
      row = this.ctx.sql
        .get(
          `INSERT INTO session_leases (session_id, node_id, node_url, expires_at, acquired_at)
           VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (session_id) DO UPDATE SET
             node_id = excluded.node_id, node_url = excluded.node_url, expires_at = excluded.expires_at,
             acquired_at = CASE WHEN session_leases.node_id = excluded.node_id
                           THEN session_leases.acquired_at ELSE excluded.acquired_at END
           WHERE session_leases.node_id = excluded.node_id OR session_leases.expires_at <= ?
           RETURNING *`,
        )
        .get(sessionId, n.id, n.url, now + ttlMs, now, now)
    } catch (err) {
      if (constraintViolation(err) === 'foreign-key') {
        throw new VisError('db.session-not-found', `No session with id ${sessionId}.`, { sessionId })
      }
      throw err
    }
    if (row !== undefined) return { acquired: true, lease: lease(row) }
    const holder = this.holder(sessionId)
    // The holder released in between: try once more rather than report a holder that is gone.
    if (holder === undefined) return this.acquire(sessionId, node, ttlMs)
    return { acquired: false, holder }
  }

  // Extends every lease `nodeId` still holds (expired ones too, unless another node took them)
  // and records its heartbeat. Returns the session ids renewed: a session this node serves that
  // is missing from the list was taken over and must be dropped here.
  renew(nodeId: string, ttlMs: number): string[] {
    parseInput(TtlSchema, ttlMs, 'leases.renew')
    const now = this.ctx.now()
    return this.ctx.db.transaction(() => {
      this.ctx.sql.get('UPDATE nodes SET heartbeat_at = ? WHERE id = ?').run(now, nodeId)
      return this.ctx.sql
        .pluck('UPDATE session_leases SET expires_at = ? WHERE node_id = ? RETURNING session_id')
        .all(now + ttlMs, nodeId) as string[]
    })()
  }

  // Gives the lease up (a closed or moved session); only the holder can. True when it held it.
  release(sessionId: string, nodeId: string): boolean {
    return (
      this.ctx.sql
        .get('DELETE FROM session_leases WHERE session_id = ? AND node_id = ?')
        .run(sessionId, nodeId).changes > 0
    )
  }

  // The session's lease, live or expired (compare expiresAt with the clock), or undefined.
  holder(sessionId: string): Lease | undefined {
    const row = this.ctx.sql.get('SELECT * FROM session_leases WHERE session_id = ?').get(sessionId)
    return row === undefined ? undefined : lease(row)
  }

  // The leases of `nodeId` that have expired: a dead node's sessions, for a takeover.
  expiredOf(nodeId: string): Lease[] {
    return this.ctx.sql
      .get('SELECT * FROM session_leases WHERE node_id = ? AND expires_at <= ? ORDER BY session_id')
      .all(nodeId, this.ctx.now())
      .map(lease)
  }

  // Every lease `nodeId` holds, live or not.
  heldBy(nodeId: string): Lease[] {
    return this.ctx.sql
      .get('SELECT * FROM session_leases WHERE node_id = ? ORDER BY session_id')
      .all(nodeId)
      .map(lease)
  }

  // Registers the node (or refreshes its url) and stamps its heartbeat; started_at is kept
  // from the first registration unless `restarted` says this is a new process.
  announce(node: NodeRef, restarted = true): NodeRecord {
    const n = parseInput(NodeSchema, node, 'leases.announce')
    const now = this.ctx.now()
    const row = this.ctx.sql
      .get(
        `INSERT INTO nodes (id, url, started_at, heartbeat_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET url = excluded.url, heartbeat_at = excluded.heartbeat_at,
           started_at = CASE WHEN ? = 1 THEN excluded.started_at ELSE nodes.started_at END
         RETURNING *`,
      )
      .get(n.id, n.url, now, now, restarted ? 1 : 0)
    return nodeRecord(row)
  }

  // Forgets a node that stopped (a local owner, src/engine/ownership.ts, at its close): its
  // leases are released first, so nothing refers to it.
  retire(nodeId: string): void {
    this.ctx.sql.get('DELETE FROM nodes WHERE id = ?').run(nodeId)
  }

  nodes(): NodeRecord[] {
    return this.ctx.sql.get('SELECT * FROM nodes ORDER BY id').all().map(nodeRecord)
  }
}
