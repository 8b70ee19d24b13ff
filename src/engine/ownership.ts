import { randomBytes } from 'node:crypto'
import { mkdirSync, readlinkSync, rmSync } from 'node:fs'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { loadConfineAddon } from '../confinement/native.js'
import type { Lease, LeasesRepo } from '../persistence/leases.js'
import { isErrorCode } from '../util/error-catalogue.js'
import { isVisError, VisError } from '../util/errors.js'
import { pidExists } from '../util/proc.js'

// Several vis processes on one home (`vis serve`, `vis mcp`, `vis run`, `vis chat`) each run
// their own sessions. A process owns a session while it holds the session's lease (the
// session_leases table the cluster uses on PostgreSQL; on SQLite only this module writes it):
// it runs the session's blocks, and nobody else does. A lease is renewed every ttl/3 and dies
// with its process: a holder whose pid is gone (same host) or whose lease expired is no owner,
// and only such sessions' running blocks and open turns are closed as abandoned.
//
// Another process reaches an owner through the owner's unix socket in the home (the lease's
// node_url is `unix:<path>`), one JSON line each way, to interrupt a block (or cancel a queued one) or close a session.
// The home is 0700 and masked from every sandbox of every vis process of this user (each home is
// recorded in the per-user registry the jails read, src/util/home-registry.ts), so only the same
// user, unconfined, reaches it.

export type OwnerOp =
  | { op: 'interrupt'; sessionId: string; blockId?: string }
  | { op: 'close'; sessionId: string }

export type OwnerHandlers = { [K in OwnerOp['op']]: (req: Extract<OwnerOp, { op: K }>) => Promise<unknown> }

const TTL_MS = 15_000
const FORWARD_TIMEOUT_MS = 30_000
const HOST = hostname()

// The owner's identity in its node id: host, pid and a random part (a reused pid is not the
// same owner).
function parseOwner(nodeId: string): { host: string; pid: number } | undefined {
  const m = /^local:(.+):(\d+):[0-9a-f]+$/.exec(nodeId)
  return m ? { host: m[1]!, pid: Number(m[2]) } : undefined
}

export class SessionOwnership {
  readonly nodeId = `local:${HOST}:${process.pid}:${randomBytes(4).toString('hex')}`
  readonly socketPath: string
  private readonly held = new Set<string>()
  private readonly server: Server
  private readonly timer: NodeJS.Timeout
  private closed = false

  constructor(
    private readonly leases: LeasesRepo,
    home: string,
    private readonly handlers: OwnerHandlers,
    // Sessions this process held but another process took (we looked dead to it): their
    // workers must stop here.
    private readonly lost: (sessionId: string) => void,
  ) {
    const dir = join(home, 'run')
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    this.socketPath = join(dir, `${process.pid}-${this.nodeId.slice(-8)}.sock`)
    rmSync(this.socketPath, { force: true })
    this.server = createServer((socket) => this.serve(socket))
    this.server.on('error', () => {}) // a socket we cannot bind only costs remote interrupts
    this.server.listen(this.socketPath)
    this.server.unref()
    this.leases.announce({ id: this.nodeId, url: this.url })
    this.timer = setInterval(() => this.renew(), Math.floor(TTL_MS / 3))
    this.timer.unref()
  }

  private get url(): string {
    return `unix:${this.socketPath}`
  }

  // Takes the session for this process, or refuses with session.owned-elsewhere naming the
  // owner. A lease left by a dead process on this host is taken at once, not after its expiry.
  claim(sessionId: string): void {
    if (this.held.has(sessionId)) return
    const ref = { id: this.nodeId, url: this.url }
    let r = this.leases.acquire(sessionId, ref, TTL_MS)
    if (!r.acquired && !this.alive(r.holder)) {
      this.leases.release(sessionId, r.holder.nodeId)
      r = this.leases.acquire(sessionId, ref, TTL_MS)
    }
    if (!r.acquired) {
      const owner = parseOwner(r.holder.nodeId)
      throw new VisError(
        'session.owned-elsewhere',
        `Session ${sessionId} is being run by another vis process${owner ? ` (pid ${owner.pid})` : ''} on this home; send its blocks there, or end that process first.`,
        { sessionId, ...(owner ? { pid: owner.pid } : {}) },
      )
    }
    this.held.add(sessionId)
  }

  release(sessionId: string): void {
    if (!this.held.delete(sessionId)) return
    this.leases.release(sessionId, this.nodeId)
  }

  // The live owner of the session when it is another process, else undefined.
  ownerElsewhere(sessionId: string): Lease | undefined {
    if (this.held.has(sessionId)) return undefined
    const lease = this.leases.holder(sessionId)
    if (lease === undefined || lease.nodeId === this.nodeId || !this.alive(lease)) return undefined
    return lease
  }

  // Whether the lease's holder still runs: unexpired, and (on this host) its pid exists.
  alive(lease: Lease): boolean {
    if (lease.expiresAt <= Date.now()) return false
    const owner = parseOwner(lease.nodeId)
    if (owner && owner.host === HOST && !pidExists(owner.pid)) return false
    return true
  }

  // Asks the owner to do `req` and answers with its reply; a VisError it sent comes back as one.
  forward(lease: Lease, req: OwnerOp): Promise<unknown> {
    const path = lease.nodeUrl.startsWith('unix:') ? lease.nodeUrl.slice(5) : undefined
    const unreachable = (why: string) =>
      new VisError(
        'session.owner-unreachable',
        `Session ${req.sessionId} is run by another vis process that did not answer (${why}); try again, or end that process.`,
        { sessionId: req.sessionId, op: req.op },
      )
    if (path === undefined) return Promise.reject(unreachable('it has no local socket'))
    return new Promise((resolve, reject) => {
      const socket = createConnection(path)
      let buf = ''
      const timer = setTimeout(() => {
        socket.destroy()
        reject(unreachable(`no answer in ${FORWARD_TIMEOUT_MS / 1000} s`))
      }, FORWARD_TIMEOUT_MS)
      socket.setEncoding('utf8')
      socket.on('connect', () => socket.write(`${JSON.stringify(req)}\n`))
      socket.on('data', (d: string) => {
        buf += d
        const nl = buf.indexOf('\n')
        if (nl < 0) return
        clearTimeout(timer)
        socket.end()
        try {
          const reply = JSON.parse(buf.slice(0, nl)) as { ok: unknown } | { error: VisErrorJson }
          if ('error' in reply) {
            const { code, message, context } = reply.error
            reject(
              isErrorCode(code)
                ? new VisError(code, message, context)
                : new VisError('session.owner-failed', message, { ...context, peerCode: code }),
            )
          } else resolve(reply.ok)
        } catch {
          reject(unreachable('its reply was not JSON'))
        }
      })
      socket.on('error', (err) => {
        clearTimeout(timer)
        reject(unreachable((err as NodeJS.ErrnoException).code ?? err.message))
      })
    })
  }

  private serve(socket: Socket): void {
    if (peerIsJailed(socket)) {
      const refused = new VisError(
        'session.owner-peer-refused',
        'The owner socket answers only vis processes of this user on the host, not a sandboxed process.',
      )
      socket.on('error', () => {})
      socket.end(`${JSON.stringify({ error: { code: refused.code, message: refused.message } })}\n`)
      return
    }
    let buf = ''
    socket.setEncoding('utf8')
    socket.on('error', () => {})
    socket.on('data', (d: string) => {
      buf += d
      const nl = buf.indexOf('\n')
      if (nl < 0) {
        if (buf.length > 64 * 1024) socket.destroy()
        return
      }
      void this.answer(buf.slice(0, nl)).then((reply) => socket.end(`${JSON.stringify(reply)}\n`))
    })
  }

  private async answer(line: string): Promise<{ ok: unknown } | { error: VisErrorJson }> {
    try {
      const req = JSON.parse(line) as OwnerOp
      if (typeof req?.sessionId !== 'string' || !(req.op in this.handlers)) {
        throw new VisError('session.owner-request', 'An owner request needs an op and a sessionId.')
      }
      // Only what this process runs: a stale lease elsewhere must not make us act on it.
      if (!this.held.has(req.sessionId)) {
        throw new VisError(
          'session.owner-unreachable',
          `Session ${req.sessionId} is no longer run by the process asked; try again.`,
          { sessionId: req.sessionId, op: req.op },
        )
      }
      const handler = this.handlers[req.op] as (r: OwnerOp) => Promise<unknown>
      return { ok: (await handler(req)) ?? null }
    } catch (err) {
      if (isVisError(err)) return { error: { code: err.code, message: err.message, context: err.context } }
      return { error: { code: 'session.owner-failed', message: (err as Error).message } }
    }
  }

  private renew(): void {
    if (this.closed || this.held.size === 0) return
    let kept: Set<string>
    try {
      kept = new Set(this.leases.renew(this.nodeId, TTL_MS))
    } catch {
      return // the store is closing or busy: the next tick tries again, well within the TTL
    }
    for (const id of [...this.held]) {
      if (kept.has(id)) continue
      this.held.delete(id)
      this.lost(id)
    }
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    clearInterval(this.timer)
    this.server.close()
    rmSync(this.socketPath, { force: true })
    for (const id of this.held) {
      try {
        this.leases.release(id, this.nodeId)
      } catch {
        // the store went first: the leases expire on their own
      }
    }
    this.held.clear()
    try {
      this.leases.retire(this.nodeId)
    } catch {
      // as above
    }
  }
}

type VisErrorJson = { code: string; message: string; context?: Record<string, unknown> }

// Whether the socket's peer runs in another user namespace than this process: a jail's process
// (bubblewrap always unshares it). The homes' masks keep every sandbox from the socket; this
// refuses one that reaches it anyway (a mount that should not have shown the home). A peer we
// may not inspect (a jail's processes are not dumpable) or outside our pid namespace is refused
// too. Without the addon's peerPid or a socket fd the masks stay the only guard.
function peerIsJailed(socket: Socket): boolean {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd
  const peerPid = loadConfineAddon()?.peerPid
  if (typeof fd !== 'number' || fd < 0 || peerPid === undefined) return false
  let pid: number
  try {
    pid = peerPid(fd)
  } catch {
    return false
  }
  if (pid <= 0) return true
  try {
    return readlinkSync(`/proc/${pid}/ns/user`) !== readlinkSync('/proc/self/ns/user')
  } catch {
    return true
  }
}
