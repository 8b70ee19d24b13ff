import { z } from 'zod'
import type { Engine } from '../engine/engine.js'
import type { Lease, LeasesRepo } from '../persistence/leases.js'
import { NAMES_KV, namesKey, takeOver } from './takeover.js'

// One `vis serve` among several sharing a PostgreSQL store (docs/cluster.md). A session is run by
// the node holding its lease. Leases are taken on demand by the node a session's requests reach
// (nginx hashes them to one node), renewed every ttl/3, and given up (the worker stopped) the
// moment a renewal fails, so two nodes never run one session.

export const ClusterOptionsSchema = z.object({
  nodeId: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'letters, digits, dot, dash or underscore, at most 63'),
  // Where the other nodes reach this one (its own address, not nginx's).
  advertise: z
    .string()
    .url()
    .refine(
      (u) => /^https?:\/\/[^/]+\/?$/.test(u),
      'an http(s) origin such as http://10.0.0.11:7878, no path',
    ),
  leaseMs: z.number().int().min(300).max(600_000).default(10_000),
})
export type ClusterOptions = z.input<typeof ClusterOptionsSchema>

export type Claim = { local: true } | { local: false; holder: Lease }

export class ClusterNode {
  readonly nodeId: string
  readonly url: string
  readonly leaseMs: number
  readonly leases: LeasesRepo
  // Sessions whose lease this process holds, with when it runs out by our own clock (measured
  // from before the write that set it, so we never think it longer than the store does).
  private readonly held = new Map<string, number>()
  private readonly claiming = new Map<string, Promise<Claim>>()
  // Names last written per session (src/cluster/takeover.ts reads them on a takeover).
  private readonly namesWritten = new Map<string, string>()
  private readonly watching = new Map<string, () => void>()
  private timer: NodeJS.Timeout | undefined
  private renewing = false

  constructor(
    readonly engine: Engine,
    options: ClusterOptions,
  ) {
    const v = ClusterOptionsSchema.parse(options)
    this.nodeId = v.nodeId
    this.url = v.advertise.replace(/\/$/, '')
    this.leaseMs = v.leaseMs
    this.leases = engine.store.leases
  }

  start(): void {
    this.leases.announce(this.ref())
    this.timer = setInterval(() => this.renew(), Math.max(100, Math.floor(this.leaseMs / 3)))
    this.timer.unref()
  }

  private ref() {
    return { id: this.nodeId, url: this.url }
  }

  holds(sessionId: string): boolean {
    return (this.held.get(sessionId) ?? 0) > Date.now()
  }

  // Whether this node may serve the session now; takes its lease when it is free or expired
  // (and then first closes what the previous owner left running: takeOver()).
  claim(sessionId: string): Promise<Claim> {
    if (this.holds(sessionId)) return Promise.resolve({ local: true })
    let pending = this.claiming.get(sessionId)
    if (!pending) {
      pending = this.acquire(sessionId).finally(() => this.claiming.delete(sessionId))
      this.claiming.set(sessionId, pending)
    }
    return pending
  }

  // The session closed: its lease goes, so no node keeps renewing it.
  release(sessionId: string): void {
    this.forget(sessionId)
    this.leases.release(sessionId, this.nodeId)
  }

  // Stops renewing (the server is stopping; the engine then ends the running blocks). The leases
  // are left to run out rather than released: released now, another node could start a session
  // whose block is still running here.
  stop(): void {
    clearInterval(this.timer)
    for (const off of this.watching.values()) off()
    this.watching.clear()
  }

  private async acquire(sessionId: string): Promise<Claim> {
    const t0 = Date.now()
    // Who had it, for the lost blocks' message (the acquire below decides, atomically).
    const before = this.leases.holder(sessionId)
    const r = this.leases.acquire(sessionId, this.ref(), this.leaseMs)
    if (!r.acquired) return { local: false, holder: r.holder }
    // Not held by this process: whoever ran the session before (another node, or an earlier run
    // of this one under the same id) is gone, and what it left running is lost.
    // Held only once the takeover is done: until then every request for the session waits on
    // this claim, so no block runs before the lost ones are closed and the report is noted.
    // (The store's renewal extends the lease meanwhile: it renews all of this node's leases.)
    if (!this.held.has(sessionId)) {
      await takeOver(this.engine, sessionId, this.nodeId, before?.nodeId === this.nodeId ? undefined : before)
    }
    this.hold(sessionId, t0)
    return { local: true }
  }

  private hold(sessionId: string, t0: number): void {
    this.held.set(sessionId, t0 + this.leaseMs)
    if (this.watching.has(sessionId)) return
    // After every block, the names the session has (what a takeover compares against).
    const off = this.engine.subscribe(sessionId, (ev) => {
      if (ev.type === 'block.finished') this.recordNames(sessionId)
    })
    this.watching.set(sessionId, off)
  }

  private recordNames(sessionId: string): void {
    const s = this.engine.liveSession(sessionId)
    if (!s || !this.holds(sessionId)) return
    const text = JSON.stringify(s.names)
    if (this.namesWritten.get(sessionId) === text) return
    try {
      this.engine.store.kv.set(NAMES_KV, namesKey(sessionId), [...s.names])
      this.namesWritten.set(sessionId, text)
    } catch {
      // The store is unreachable: the next block writes them.
    }
  }

  private forget(sessionId: string): void {
    this.held.delete(sessionId)
    this.namesWritten.delete(sessionId)
    this.watching.get(sessionId)?.()
    this.watching.delete(sessionId)
  }

  // Every ttl/3: extend our leases. One another node took (ours had run out: a pause, a slow
  // store) is given up here, its worker stopped; when the store cannot be reached, each lease is
  // given up as it runs out by our own clock.
  private renew(): void {
    if (this.renewing) return
    this.renewing = true
    try {
      const ids = [...this.held.keys()]
      const t0 = Date.now()
      let kept: Set<string> | undefined
      try {
        kept = new Set(this.leases.renew(this.nodeId, this.leaseMs))
      } catch {
        kept = undefined
      }
      for (const id of ids) {
        if (kept?.has(id)) this.held.set(id, t0 + this.leaseMs)
        else if (kept !== undefined || (this.held.get(id) ?? 0) <= Date.now()) this.giveUp(id)
      }
    } finally {
      this.renewing = false
    }
  }

  private giveUp(sessionId: string): void {
    this.forget(sessionId)
    this.engine
      .dropWorker(sessionId)
      .catch(() => undefined)
      .finally(() => {
        // Claimed again meanwhile: the lease is in use.
        if (this.held.has(sessionId) || this.claiming.has(sessionId)) return
        try {
          // Still ours in the store (the renewal failed, not the lease): let the next node have it
          // now rather than renewing a lease nobody here serves.
          this.leases.release(sessionId, this.nodeId)
        } catch {
          // The store is unreachable: the lease runs out on its own.
        }
      })
  }
}
