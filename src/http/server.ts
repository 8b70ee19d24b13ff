import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getRequestListener } from '@hono/node-server'
import type { Hono } from 'hono'
import type { ClusterOptions } from '../cluster/node.js'
import { startCluster } from '../cluster/start.js'
import { protectPort } from '../confinement/egress/guard.js'
import { createEngine, type Engine, type EngineOptions } from '../engine/engine.js'
import { warmFormatterThread } from '../format/format-pool.js'
import { VisError } from '../util/errors.js'
import { answerGroup, budgetAnswer } from './answer-budget.js'
import { type AppOptions, createApp, DEFAULT_MAX_BODY_BYTES, serverBudget } from './app.js'
import { requireTokenFor } from './auth.js'
import { type ConnectionCapOptions, capConnections, connectionCapSettings } from './connection-caps.js'
import { type FastRoutes, fastRoutes } from './fast-routes/index.js'
import { DEFAULT_BODY_TIMEOUT_MS, guardRequestBodies } from './request-bodies.js'

export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_PORT = 7878

export type ServerOptions = Omit<EngineOptions, 'bindAddress'> &
  Omit<AppOptions, 'cluster'> & {
    // Run as one node of a cluster sharing a PostgreSQL store (src/cluster, docs/cluster.md).
    cluster?: ClusterOptions
    host?: string
    // 0 picks a free port.
    port?: number
    // Serve an engine the caller owns (and closes); otherwise one is created and closed here.
    engine?: Engine
    // Answer the hot block routes before hono (src/http/fast-routes); default on, off in a cluster.
    fastRoutes?: boolean
    // How long a request body may take to arrive after its headers (default 30 s): 408, closed.
    bodyTimeoutMs?: number
  } & ConnectionCapOptions

export type VisServer = {
  url: string
  host: string
  port: number
  engine: Engine
  // The fast routes, when on (how many requests they answered).
  fastRoutes?: FastRoutes
  close(): Promise<void>
}

// Node's listener for the API: the fast routes first (when on), hono for everything else.
export function apiListener(app: Hono, fast: FastRoutes | undefined, hostname: string): RequestListener {
  const listener = getRequestListener(app.fetch, { hostname })
  if (!fast) return listener
  return (req, res) => {
    if (!fast.handle(req, res)) void listener(req, res)
  }
}

const hostInUrl = (host: string) => (host.includes(':') ? `[${host}]` : host)

// Starts the HTTP API. A non-loopback host without a token is refused before anything starts.
export async function startServer(options: ServerOptions = {}): Promise<VisServer> {
  const host = options.host ?? DEFAULT_HOST
  const port = options.port ?? DEFAULT_PORT
  const token = options.token ?? (process.env.VIS_TOKEN || undefined)
  requireTokenFor(host, token)
  const bodyTimeout = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS
  if (!Number.isInteger(bodyTimeout) || bodyTimeout < 1) {
    throw new VisError('http.bad-option', `bodyTimeoutMs must be a positive integer, not ${bodyTimeout}.`, {
      bodyTimeoutMs: bodyTimeout,
    })
  }
  const capSettings = connectionCapSettings(options)
  const owned = options.engine === undefined
  const engine =
    options.engine ?? (await createEngine({ ...options, bindAddress: `${hostInUrl(host)}:${port}` }))
  let cluster: ReturnType<typeof startCluster> | undefined
  try {
    cluster = options.cluster ? startCluster(engine, options.cluster) : undefined
  } catch (err) {
    if (owned) await engine.close()
    throw err
  }
  const allowedHosts = [...(options.allowedHosts ?? [])]
  // Other nodes pass requests on to the address this one advertises.
  if (cluster) allowedHosts.push(new URL(cluster.url).hostname)
  // One budget for what the server holds for clients that stop reading: event streams and plain
  // answers together (answer-budget.ts, sse-budget.ts).
  const budget = options.budget ?? serverBudget(options)
  const appOptions = { ...options, token, bindHost: host, allowedHosts, cluster, budget }
  const app = createApp(engine, appOptions)
  // A cluster forwards requests about sessions other nodes own: that stays hono's middleware.
  const fast =
    options.fastRoutes !== false && !cluster
      ? fastRoutes(engine, { ...appOptions, maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES })
      : undefined
  const api = apiListener(app, fast, host)
  const server = createServer((req, res) => {
    budgetAnswer(res, budget, answerGroup(req))
    if (caps.admit(req, res)) api(req, res)
  })
  // Slow or hostile clients: bounded bodies, capped connections (issue 30).
  const caps = capConnections(server, capSettings)
  guardRequestBodies(server, bodyTimeout)
  // A waiting block may take long: the request timeout is the block's own timeout, not Node's.
  server.requestTimeout = 0
  server.headersTimeout = 60_000
  // An idle keep-alive connection must be closed by the proxy in front (nginx keeps its upstream
  // connections 60 s: src/cluster/nginx-config.ts), never by us first: Node's default of 5 s let a
  // request nginx sent on a connection we were closing fail with its own 502 (a POST is not retried).
  server.keepAliveTimeout = 75_000
  warmFormatterThread()
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (err) {
    cluster?.stop()
    if (owned) await engine.close()
    const e = err as NodeJS.ErrnoException
    throw new VisError('http.listen', `Cannot listen on ${host}:${port}: ${e.message}`, {
      host,
      port,
      errno: e.code,
    })
  }
  const answering = trackAnswers(server)
  const bound = (server.address() as AddressInfo).port
  // No sandbox reaches the server that runs it, whatever its network allow list says.
  const unprotect = protectPort(bound)
  let closing: Promise<void> | undefined
  return {
    url: `http://${hostInUrl(host)}:${bound}`,
    host,
    port: bound,
    engine,
    fastRoutes: fast,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
        // Idle keep-alive sockets never close on their own; event streams neither (ended here).
        server.closeIdleConnections()
        answering.endStreams()
        // Renewals stop; the leases run out and other nodes take the sessions over.
        cluster?.stop()
        if (owned) await engine.close()
        // A client waiting on a block gets its end (the engine stopped it) rather than a cut
        // connection: the answers being written get a moment before every socket closes.
        await answering.settled(2000)
        server.closeAllConnections()
        await stopped
        unprotect()
      })()
      return closing
    },
  }
}

// The requests the server is still answering. Event streams (text/event-stream) never finish on
// their own, so close() ends them; the others it waits for, a bounded time. The content type is
// caught at writeHead: hono's adapter passes its headers there, where getHeader cannot see them.
function trackAnswers(server: Server) {
  const open = new Set<ServerResponse>()
  const streams = new Set<ServerResponse>()
  let wake: (() => void) | undefined
  server.prependListener('request', (_req, res: ServerResponse) => {
    open.add(res)
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse
    ;(res as { writeHead: unknown }).writeHead = (...args: unknown[]) => {
      const headers = args.find((a) => typeof a === 'object' && a !== null)
      if (
        /text\/event-stream/i.test(`${JSON.stringify(headers ?? {})} ${res.getHeader('content-type') ?? ''}`)
      )
        streams.add(res)
      return writeHead(...args)
    }
    res.once('close', () => {
      open.delete(res)
      streams.delete(res)
      if (open.size === streams.size) wake?.()
    })
  })
  const endStreams = () => {
    for (const res of streams) res.destroy()
  }
  return {
    endStreams,
    settled(ms: number): Promise<void> {
      endStreams()
      if (open.size === streams.size) return Promise.resolve()
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, ms)
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    },
  }
}
