import type { Context } from 'hono'
import { z } from 'zod'
import { exitCodeFor, ProbeReportSchema, probe } from '../confinement/probe.js'
import type { Engine } from '../engine/engine.js'
import { PROMETHEUS_CONTENT_TYPE } from '../engine/metrics.js'
import {
  BlockViewSchema,
  CreateSessionBodySchema,
  EventViewSchema,
  ExtensionListSchema,
  IdempotencyKeySchema,
  InterruptResultSchema,
  ListSessionsQuerySchema,
  RunBlockBodySchema,
  SessionDetailQuerySchema,
  SessionDetailSchema,
  SessionListSchema,
  SessionViewSchema,
} from '../engine/schemas.js'
import { VisError } from '../util/errors.js'
import { DRAFT_ROUTES } from './draft-routes.js'
import { ErrorEnvelopeSchema, zodDetails } from './errors.js'
import { parseLastEventId, sessionEventStream } from './sse.js'

export type RouteContext = {
  engine: Engine
  sse: { heartbeatMs: number; maxQueuedFrames: number }
}

type ResponseSpec = { description: string; schema?: z.ZodTypeAny; contentType?: string }
type HeaderSpec = { name: string; description: string; schema: z.ZodTypeAny }

// One route: what the OpenAPI document says about it and the handler that serves it.
// The server mounts exactly this table, so the document and the routes cannot disagree.
export type RouteSpec = {
  method: 'get' | 'post' | 'delete'
  // Hono syntax, `:name` for a parameter.
  path: string
  operationId: string
  summary: string
  body?: z.ZodTypeAny
  query?: z.AnyZodObject
  headers?: HeaderSpec[]
  responses: Record<number, ResponseSpec>
  handler: (c: Context, ctx: RouteContext) => Response | Promise<Response>
}

// A body is JSON or absent; absent reads as {} so `POST /v1/sessions` with no body works.
export async function readBody<S extends z.ZodTypeAny>(c: Context, schema: S): Promise<z.output<S>> {
  const text = await c.req.text()
  let value: unknown = {}
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text)
    } catch (err) {
      throw new VisError('http.invalid-json', `The request body is not JSON: ${(err as Error).message}`)
    }
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    throw new VisError('http.invalid-body', 'The request body is invalid.', zodDetails(parsed.error))
  }
  return parsed.data
}

function readQuery<S extends z.AnyZodObject>(c: Context, schema: S): z.output<S> {
  const parsed = schema.safeParse(c.req.query())
  if (!parsed.success) {
    throw new VisError('http.invalid-query', 'The query string is invalid.', zodDetails(parsed.error))
  }
  return parsed.data
}

function idempotencyKey(c: Context): string | undefined {
  const raw = c.req.header('idempotency-key')
  if (raw === undefined) return undefined
  const parsed = IdempotencyKeySchema.safeParse(raw)
  if (!parsed.success) {
    throw new VisError('http.invalid-header', 'Idempotency-Key must be 1 to 255 characters.', {
      header: 'Idempotency-Key',
    })
  }
  return parsed.data
}

// RFC 7240: `Prefer: respond-async`, possibly among other preferences.
const prefersAsync = (c: Context): boolean =>
  (c.req.header('prefer') ?? '')
    .split(',')
    .some((p) => p.trim().split(';')[0]!.trim().toLowerCase() === 'respond-async')

const err = (description: string): ResponseSpec => ({ description, schema: ErrorEnvelopeSchema })
const INVALID = err('Invalid body, query or header.')
const NOT_FOUND = err('No such session (or attachment).')

const HealthSchema = z.object({
  ok: z.boolean(),
  home: z.string(),
  bind_address: z.string().nullable(),
  uptime_s: z.number().int(),
  sessions_open: z.number().int(),
  blocks_running: z.number().int(),
})

export const ROUTES: RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/sessions',
    operationId: 'createSession',
    summary: 'Create a session with its policy (roots, network, shell); its worker starts at once.',
    body: CreateSessionBodySchema,
    responses: {
      201: { description: 'The session.', schema: SessionViewSchema },
      400: INVALID,
      409: err('A session with that id exists.'),
    },
    async handler(c, { engine }) {
      const body = await readBody(c, CreateSessionBodySchema)
      const session = await engine.createSession(body)
      c.header('Location', `/v1/sessions/${encodeURIComponent(session.id)}`)
      return c.json(session, 201)
    },
  },
  {
    method: 'get',
    path: '/v1/sessions',
    operationId: 'listSessions',
    summary: 'List sessions, newest first.',
    query: ListSessionsQuerySchema,
    responses: { 200: { description: 'The sessions.', schema: SessionListSchema }, 400: INVALID },
    handler(c, { engine }) {
      return c.json({ sessions: engine.listSessions(readQuery(c, ListSessionsQuerySchema)) })
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id',
    operationId: 'getSession',
    summary:
      'A session with its blocks. `?format=display` adds `code_display` to each block: its code ' +
      'formatted for people (the stored `code` is always what was submitted).',
    query: SessionDetailQuerySchema,
    responses: {
      200: { description: 'The session.', schema: SessionDetailSchema },
      400: INVALID,
      404: NOT_FOUND,
    },
    handler(c, { engine }) {
      return c.json(engine.getSession(c.req.param('id')!, readQuery(c, SessionDetailQuerySchema)))
    },
  },
  {
    method: 'delete',
    path: '/v1/sessions/:id',
    operationId: 'closeSession',
    summary: 'Close a session: its worker stops, its history stays.',
    responses: { 200: { description: 'The closed session.', schema: SessionViewSchema }, 404: NOT_FOUND },
    async handler(c, { engine }) {
      return c.json(await engine.closeSession(c.req.param('id')!))
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/:id/blocks',
    operationId: 'runBlock',
    summary:
      'Run a block. Waits for the outcome, or with `Prefer: respond-async` answers 202 with the block at once. ' +
      'A retried submission with the same Idempotency-Key returns the first one instead of running again.',
    body: RunBlockBodySchema,
    headers: [
      {
        name: 'Idempotency-Key',
        description: 'Makes a retried submission safe.',
        schema: IdempotencyKeySchema,
      },
      { name: 'Prefer', description: '`respond-async` to answer 202 at once.', schema: z.string() },
    ],
    responses: {
      200: { description: 'The finished block.', schema: BlockViewSchema },
      202: { description: 'Accepted; the block is running (follow the events).', schema: BlockViewSchema },
      400: INVALID,
      404: NOT_FOUND,
      409: err('The session is closed, or its worker was retired.'),
    },
    async handler(c, { engine }) {
      const id = c.req.param('id')!
      const key = idempotencyKey(c)
      const body = await readBody(c, RunBlockBodySchema)
      const submitted = await engine.submitBlock(id, body, { idempotencyKey: key })
      if (submitted.replayed) c.header('Idempotent-Replayed', 'true')
      c.header('Location', `/v1/sessions/${encodeURIComponent(id)}`)
      if (prefersAsync(c)) {
        c.header('Preference-Applied', 'respond-async')
        return c.json(submitted.block, submitted.block.status === 'running' ? 202 : 200)
      }
      return c.json(await submitted.done, 200)
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id/events',
    operationId: 'sessionEvents',
    summary:
      'Server-Sent Events of the session (block-started, output, block-finished, interrupt, worker-retired, ' +
      'defs-restored, session-closed). Reconnect with Last-Event-ID (or ?after=) to replay what was missed.',
    query: z.object({ after: z.string().regex(/^\d+$/).optional() }),
    headers: [{ name: 'Last-Event-ID', description: 'The last event id received.', schema: z.string() }],
    responses: {
      200: {
        description: 'An event stream; each `data` is one event.',
        schema: EventViewSchema,
        contentType: 'text/event-stream',
      },
      400: INVALID,
      404: NOT_FOUND,
    },
    handler(c, { engine, sse }) {
      const after = parseLastEventId(c.req.header('last-event-id'), c.req.query('after'))
      return sessionEventStream(engine, c.req.param('id')!, after, sse)
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/:id/interrupt',
    operationId: 'interrupt',
    summary: 'Interrupt the running block, if any.',
    responses: { 200: { description: 'Whether it landed.', schema: InterruptResultSchema }, 404: NOT_FOUND },
    async handler(c, { engine }) {
      return c.json(await engine.interrupt(c.req.param('id')!))
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id/attachments/:aid',
    operationId: 'getAttachment',
    summary: 'The bytes of an attachment, with its media type.',
    responses: {
      200: { description: 'The bytes.', contentType: 'application/octet-stream' },
      404: NOT_FOUND,
    },
    handler(c, { engine }) {
      const { attachment, data } = engine.attachment(c.req.param('id')!, c.req.param('aid')!)
      const headers: Record<string, string> = {
        'Content-Type': attachment.media_type,
        'Content-Length': String(data.byteLength),
        'X-Content-Type-Options': 'nosniff',
        ETag: `"${attachment.sha256}"`,
      }
      if (attachment.name) {
        headers['Content-Disposition'] = `attachment; filename*=UTF-8''${encodeURIComponent(attachment.name)}`
      }
      return new Response(new Uint8Array(data), { status: 200, headers })
    },
  },
  {
    method: 'get',
    path: '/v1/health',
    operationId: 'health',
    summary: 'Liveness; open without a token.',
    responses: { 200: { description: 'Healthy.', schema: HealthSchema } },
    handler(c, { engine }) {
      return c.json(engine.health())
    },
  },
  {
    method: 'get',
    path: '/v1/doctor',
    operationId: 'doctor',
    summary:
      'Which confinement layers this machine enforces, and which extension files failed to load ' +
      '(what `vis doctor --json` prints).',
    responses: {
      200: {
        description:
          'The probe report; exitCode is what `vis doctor` would exit with (0 info, 1 warn, 2 error).',
        schema: ProbeReportSchema.extend({ exitCode: z.number().int() }),
      },
    },
    handler(c, { engine }) {
      const report = probe()
      const checks = [...report.checks, ...engine.extensionChecks()]
      return c.json({ ...report, checks, exitCode: exitCodeFor(checks) })
    },
  },
  {
    method: 'get',
    path: '/v1/extensions',
    operationId: 'listExtensions',
    summary:
      'The trusted Python extensions that loaded (with their tools as the model sees them), and every ' +
      'file that failed to load with the reason.',
    responses: { 200: { description: 'The extensions.', schema: ExtensionListSchema } },
    handler(c, { engine }) {
      return c.json(engine.listExtensions())
    },
  },
  {
    method: 'post',
    path: '/v1/extensions/reload',
    operationId: 'reloadExtensions',
    summary:
      'Load every extension file again; a file that fails keeps its previous good version. Live ' +
      'sessions get new tools bound and removed ones unbound.',
    responses: {
      200: { description: 'The extensions after the reload.', schema: ExtensionListSchema },
      503: err('The engine is shutting down.'),
    },
    async handler(c, { engine }) {
      return c.json(await engine.reloadExtensions())
    },
  },
  {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics: sessions, blocks, block latency, worker restarts, pool size.',
    responses: { 200: { description: 'Prometheus text format 0.0.4.', contentType: 'text/plain' } },
    handler(_c, { engine }) {
      return new Response(engine.metricsText(), { headers: { 'Content-Type': PROMETHEUS_CONTENT_TYPE } })
    },
  },
  ...DRAFT_ROUTES,
]

// Hono `:id` → OpenAPI `{id}`.
export const openApiPath = (path: string): string => path.replace(/:([A-Za-z_]\w*)/g, '{$1}')
