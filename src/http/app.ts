import { readFileSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { join } from 'node:path'
import { Hono } from 'hono'
import type { ClusterNode } from '../cluster/node.js'
import type { Engine } from '../engine/engine.js'
import { type McpServePolicy, McpServePolicySchema } from '../engine/mcp-config.js'
import { MCP_PATH, mountMcp } from '../mcp/server/transport-http.js'
import { packageRoot } from '../util/home.js'
import { AGENT_ROUTES } from './agent-routes.js'
import { answerCharge, boundedStream } from './answer-budget.js'
import { clusterMiddleware } from './cluster-forwarding.js'
import { errorAnswer, errorResponse } from './errors.js'
import { bodyLimit } from './middleware/body-limit.js'
import { browserGuards } from './middleware/index.js'
import { OPENAPI_PATH, openApiDocument } from './openapi.js'
import { mountPage } from './page/index.js'
import { checkKnownQuery } from './route-query.js'
import { ROUTES as CORE_ROUTES, type RouteContext } from './routes.js'
import { duringShutdown } from './shutdown.js'
import { DEFAULT_MAX_QUEUED_BYTES, DEFAULT_MAX_QUEUED_FRAMES } from './sse.js'
import {
  DEFAULT_MAX_QUEUED_BYTES_PER_SESSION,
  DEFAULT_MAX_QUEUED_BYTES_TOTAL,
  SseBudget,
} from './sse-budget.js'

// The agent's turns and approvals (src/agent) are mounted beside the core routes.
export const MOUNTED_ROUTES = [...CORE_ROUTES, ...AGENT_ROUTES]

export type AppOptions = {
  // Bearer token every request but /v1/health must carry; none on a loopback bind.
  token?: string
  // Host names (besides loopback ones) the server answers to; others get 421 (DNS rebinding).
  allowedHosts?: string[]
  // The address the server listens on (startServer passes it): allowed as a Host too.
  bindHost?: string
  // Web origins allowed to call the API from a browser (CORS); others get 403.
  corsOrigins?: string[]
  // Request bodies larger than this are refused with 413.
  maxBodyBytes?: number
  heartbeatMs?: number
  // An SSE client this many frames behind is disconnected (it reconnects with Last-Event-ID).
  maxQueuedFrames?: number
  // ...or this many bytes of frames behind (frames carry sandbox output).
  maxQueuedBytes?: number
  // ...and the bytes queued for all streams together, server-wide and per session (a stream
  // whose frame does not fit, or the one furthest behind, is disconnected the same way).
  maxQueuedBytesTotal?: number
  maxQueuedBytesPerSession?: number
  // That budget itself, when the server made it (it also charges plain answers: answer-budget.ts).
  budget?: SseBudget
  // The policy of sessions MCP clients start at /mcp (default: no roots, network off).
  mcp?: McpServePolicy
  // This node of a cluster: requests about sessions another node owns go there (src/cluster).
  cluster?: ClusterNode
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

// The bytes held for clients that stop reading, for one server: event streams and answers.
export const serverBudget = (
  options: Pick<AppOptions, 'maxQueuedBytesTotal' | 'maxQueuedBytesPerSession'>,
): SseBudget =>
  new SseBudget(
    options.maxQueuedBytesTotal ?? DEFAULT_MAX_QUEUED_BYTES_TOTAL,
    options.maxQueuedBytesPerSession ?? DEFAULT_MAX_QUEUED_BYTES_PER_SESSION,
  )

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string })
      .version
  } catch {
    return '0.0.0'
  }
}

const routeRegex = (path: string) => new RegExp(`^${path.replace(/:[A-Za-z_]\w*/g, '[^/]+')}/?$`)

// The HTTP API over one engine: validation, auth, limits and serialisation, no rules of its own.
export function createApp(engine: Engine, options: AppOptions = {}): Hono {
  const ctx: RouteContext = {
    engine,
    sse: {
      heartbeatMs: options.heartbeatMs ?? 15_000,
      maxQueuedFrames: options.maxQueuedFrames ?? DEFAULT_MAX_QUEUED_FRAMES,
      maxQueuedBytes: options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES,
      budget: options.budget ?? serverBudget(options),
    },
  }
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  // strict: false serves `/v1/sessions/` as `/v1/sessions` (a 405 that listed the very method
  // asked for was the answer before).
  const app = new Hono({ strict: false })
  app.use('*', browserGuards(options))
  app.use('*', bodyLimit(maxBody))
  if (options.cluster) app.use('*', clusterMiddleware(options.cluster))
  for (const route of MOUNTED_ROUTES) {
    app.on(route.method.toUpperCase(), route.path, (c) => {
      checkKnownQuery(c, route.query)
      return route.handler(c, ctx)
    })
  }
  mountPage(app)
  const doc = openApiDocument(MOUNTED_ROUTES, packageVersion(), options.token !== undefined)
  app.get(OPENAPI_PATH, (c) => {
    checkKnownQuery(c)
    return c.json(doc)
  })

  const matchers = [...MOUNTED_ROUTES, { method: 'get', path: OPENAPI_PATH }].map((r) => ({
    method: r.method.toUpperCase(),
    re: routeRegex(r.path),
  }))
  app.notFound((c) => {
    const methods = matchers.filter((m) => m.re.test(c.req.path)).map((m) => m.method)
    if (methods.length > 0) {
      // HEAD is served wherever GET is (hono), OPTIONS everywhere (RFC 9110 §9.3.7).
      const allowed = [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS']
      c.header('Allow', allowed.join(', '))
      if (c.req.method === 'OPTIONS') return c.body(null, 204)
      const a = errorAnswer('http.method-not-allowed', `${c.req.method} is not allowed here.`, { allowed })
      return c.json(a.json, a.status)
    }
    const a = errorAnswer(
      'http.not-found',
      `No route ${c.req.method} ${c.req.path}; the routes are listed at ${OPENAPI_PATH}.`,
      { path: c.req.path },
    )
    return c.json(a.json, a.status)
  })
  app.onError((err, c) => errorResponse(c, duringShutdown(err, engine)))
  // MCP's Streamable HTTP endpoint, behind the same middleware as every route. Its POST answers
  // are event streams the SDK queues without bound: read into the connection's budgeted answer.
  app.use(MCP_PATH, async (c, next) => {
    await next()
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing
    const charge = outgoing && answerCharge(outgoing)
    const body = c.res.body
    if (!charge || !body || !/text\/event-stream/i.test(c.res.headers.get('content-type') ?? '')) return
    const res = c.res
    c.res = new Response(boundedStream(body, charge, ctx.sse.maxQueuedBytes), {
      status: res.status,
      headers: res.headers,
    })
  })
  mountMcp(app, engine, {
    policy: options.mcp ?? McpServePolicySchema.parse({}),
    maxAnswerBytes: ctx.sse.maxQueuedBytes,
  })
  return app
}
