import type { Context, MiddlewareHandler } from 'hono'
import { FORWARDED_BY, forward, OWNER_HEADER, OwnerFailed, OwnerUnreachable } from '../cluster/forward.js'
import type { ClusterNode } from '../cluster/node.js'
import { errorAnswer } from './errors.js'

// Where ownership meets HTTP: every request about one session (/v1/sessions/<id>[/...]) is served
// here only while this node holds the session's lease; otherwise it is passed on to the owner and
// its answer streamed back. An owner that cannot be reached is waited for until its lease runs
// out (polled, bounded by that lease), then this node takes the session over and serves it.

const SESSION_PATH = /^\/v1\/sessions\/([^/]+)/
// On a cluster.not-owner answer: the request was not acted on, the forwarder may ask again.
const MISROUTED = 'x-vis-misrouted'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const answer = (c: Context, a: ReturnType<typeof errorAnswer>) => c.json(a.json, a.status)

function setOwner(c: Context, nodeId: string): void {
  try {
    c.res.headers.set(OWNER_HEADER, nodeId)
  } catch {
    // Immutable headers (a raw Response): the owner header is a courtesy.
  }
}

export function clusterMiddleware(node: ClusterNode): MiddlewareHandler {
  const engine = node.engine
  return async (c, next) => {
    const m = SESSION_PATH.exec(c.req.path)
    if (!m) {
      await next()
      // A creation lands on any node (nginx spreads them); the session's later requests hash to
      // one node, which takes its lease on demand. So the new session is left dormant and
      // unowned here: its worker (started to prove the jail accepts the policy) is stopped, and
      // the node its requests reach starts one on its first block, with no hop in between.
      const created = c.req.method === 'POST' && c.req.path.replace(/\/$/, '') === '/v1/sessions'
      if (created && c.res.status === 201) {
        const location = c.res.headers.get('location') ?? ''
        const id = decodeURIComponent(location.split('/').pop() ?? '')
        if (id) {
          await engine.dropWorker(id)
          c.res = c.json(engine.sessionView(id), 201, { Location: location })
        }
      }
      return
    }
    let sessionId: string
    try {
      sessionId = decodeURIComponent(m[1]!)
    } catch {
      // Not a session id anyone could have: the route answers (404).
      return next()
    }
    // An unknown session is the route's 404; a closed one has no worker anywhere, and its
    // history reads the same from every node: no lease for either.
    const row = engine.store.sessions.get(sessionId)
    if (!row || row.closedAt !== null) return next()
    const forwardedBy = c.req.header(FORWARDED_BY)
    const body = ['GET', 'HEAD'].includes(c.req.method) ? undefined : Buffer.from(await c.req.arrayBuffer())
    // Past this, the owner is neither answering nor letting its lease run out: something is wrong
    // with the store's clock or the owner's renewals, and the client hears so.
    const giveUpAt = Date.now() + 2 * node.leaseMs + 5_000
    for (;;) {
      const claim = await node.claim(sessionId)
      if (claim.local) {
        await next()
        setOwner(c, node.nodeId)
        if (c.req.method === 'DELETE' && c.req.path === m[0] && c.res.status === 200) node.release(sessionId)
        return
      }
      const holder = claim.holder
      if (forwardedBy !== undefined) {
        // Passed on to us by a node that thought we own it; we do not (any more). Never pass it
        // on again: two nodes must not bounce a request between them.
        c.header(OWNER_HEADER, holder.nodeId)
        c.header(MISROUTED, '1')
        return answer(
          c,
          errorAnswer(
            'cluster.not-owner',
            `Session ${sessionId} is owned by node ${holder.nodeId}, not ${node.nodeId}; retry the request.`,
            { sessionId, owner: holder.nodeId, forwardedBy },
          ),
        )
      }
      // While we wait for the owner, it may lose the lease (frozen, cut off): stop waiting then.
      const watch = new AbortController()
      const check = setInterval(
        () => {
          const now = node.leases.holder(sessionId)
          if (!now || now.nodeId !== holder.nodeId || now.expiresAt <= Date.now()) watch.abort()
        },
        Math.max(100, Math.floor(node.leaseMs / 2)),
      )
      try {
        const res = await forward(c.req.raw, {
          nodeId: node.nodeId,
          ownerId: holder.nodeId,
          ownerUrl: holder.nodeUrl,
          body,
          signal: watch.signal,
        })
        // The lease moved on between our read and the owner's: it did nothing, ask again.
        if (res.status !== 503 || res.headers.get(MISROUTED) !== '1' || Date.now() > giveUpAt) return res
        await res.body?.cancel()
      } catch (err) {
        if (err instanceof OwnerFailed) {
          c.header(OWNER_HEADER, holder.nodeId)
          return answer(
            c,
            errorAnswer(
              'cluster.owner-failed',
              `Node ${holder.nodeId}, which runs session ${sessionId}, failed while answering; retry (a block with the same Idempotency-Key runs once).`,
              { sessionId, owner: holder.nodeId },
            ),
          )
        }
        if (!(err instanceof OwnerUnreachable)) throw err
        if (c.req.raw.signal.aborted) throw err
        if (Date.now() > giveUpAt) {
          return answer(
            c,
            errorAnswer(
              'cluster.owner-unreachable',
              `Node ${holder.nodeId} owns session ${sessionId} but cannot be reached, and its lease keeps being renewed.`,
              { sessionId, owner: holder.nodeId, ownerUrl: holder.nodeUrl },
            ),
          )
        }
        // Wait for the lease to run out (polled: it may be released sooner), then claim again.
        await sleep(Math.min(250, Math.max(25, holder.expiresAt - Date.now() + 5)))
      } finally {
        clearInterval(check)
      }
    }
  }
}
