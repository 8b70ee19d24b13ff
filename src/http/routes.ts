import type { ServerResponse } from 'node:http'
import type { Context } from 'hono'
import { z } from 'zod'
import { egressChecks } from '../confinement/egress/health.js'
import { exitCodeFor, ProbeReportSchema, probe } from '../confinement/probe.js'
import type { Engine } from '../engine/engine.js'
import { PROMETHEUS_CONTENT_TYPE } from '../engine/metrics.js'
import {
  BlockViewSchema,
  CreateSessionBodySchema,
  ExtensionListSchema,
  IdempotencyKeySchema,
  InterruptBodySchema,
  InterruptResultSchema,
  ListSessionsQuerySchema,
  RunBlockBodySchema,
  SESSION_VIEW_BLOCK_CHARS,
  SessionDetailQuerySchema,
  SessionDetailSchema,
  SessionListSchema,
  SessionViewQuerySchema,
  SessionViewSchema,
} from '../engine/schemas.js'
import { VisError } from '../util/errors.js'
import { budgetsItself } from './answer-budget.js'
import { attachmentBody, attachmentHeaders } from './attachment-response.js'
import { addCodeDisplay, getBlockRoute, prefersAsyncHeader, runBlockRoute } from './block-route.js'
import { DRAFT_ROUTES } from './draft-routes.js'
import { err } from './errors.js'
import { SseFrameDataSchema } from './event-schemas.js'
import { onHangup } from './hangup.js'
import { isAuthenticated } from './middleware/index.js'
import { parseJsonBody } from './request-body.js'
import { parseLastEventId, refuseBeyondLastEvent, type SseOptions, sessionEventStream } from './sse.js'

export type RouteContext = {
  engine: Engine
  sse: Omit<SseOptions, 'onDrop'>
}

// `headers`: the response headers a client may read, by name, with what they say.
type ResponseSpec = {
  description: string
  schema?: z.ZodTypeAny
  contentType?: string
  headers?: Record<string, string>
}

const LOCATION = { Location: 'The URL of the resource made (a path on this server).' }
const BLOCK_HEADERS = {
  Location: "The block's own URL (GET it for its state).",
  'Idempotent-Replayed':
    '`true` when this is the first submission with the same Idempotency-Key, returned again.',
}
type HeaderSpec = { name: string; description: string; schema: z.ZodTypeAny }

// One route: what the OpenAPI document says about it and the handler that serves it.
// The server mounts exactly this table, so the document and the routes cannot disagree.
export type RouteSpec = {
  method: 'get' | 'post' | 'delete'
  // Hono syntax, `:name` for a parameter.
  path: string
  operationId: string
  summary: string
  // Longer prose for the document (the SSE frames, for instance).
  description?: string
  body?: z.ZodTypeAny
  query?: z.AnyZodObject
  headers?: HeaderSpec[]
  // The body may be left out (it then reads as {}).
  bodyOptional?: boolean
  responses: Record<number, ResponseSpec>
  handler: (c: Context, ctx: RouteContext) => Response | Promise<Response>
}

// A body is JSON or absent; absent reads as {} so `POST /v1/sessions` with no body works.
export async function readBody<S extends z.ZodTypeAny>(c: Context, schema: S): Promise<z.output<S>> {
  return parseJsonBody(await c.req.text(), schema)
}

// A bad query parameter is reported as that parameter, by name.
export function readQuery<S extends z.AnyZodObject>(c: Context, schema: S): z.output<S> {
  // `token` belongs to the auth middleware (the page's URL and EventSource carry it), not the route.
  const { token: _token, ...query } = c.req.query()
  const parsed = schema.safeParse(query)
  if (!parsed.success) {
    const issues = parsed.error.issues.flatMap((i) =>
      i.code === 'unrecognized_keys'
        ? i.keys.map((k) => ({
            path: k,
            message: `unknown query parameter; known: ${Object.keys(schema.shape).join(', ')}`,
          }))
        : [{ path: i.path.join('.') || '(query)', message: i.message }],
    )
    const named = issues.map((i) => `${i.path}: ${i.message}`).join('; ')
    throw new VisError('http.invalid-query', `Invalid query parameter ${named}.`, {
      parameters: issues.map((i) => i.path),
      issues,
    })
  }
  return parsed.data
}

// RFC 7240: `Prefer: respond-async`, possibly among other preferences.
export const prefersAsync = (c: Context): boolean => prefersAsyncHeader(c.req.header('prefer'))

export const INVALID = err('Invalid body, query or header.')
export const NOT_FOUND = err('No such session (or attachment).')

export const HealthSchema = z.object({
  ok: z.boolean(),
  home: z.string().optional().describe('Only for a caller that sent the token (or when none is configured).'),
  bind_address: z.string().nullable().optional().describe('As home.'),
  uptime_s: z.number().int(),
  sessions_open: z.number().int(),
  blocks_running: z.number().int(),
})

export const DoctorReportSchema = ProbeReportSchema.extend({ exitCode: z.number().int() })

export const ROUTES: RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/sessions',
    operationId: 'createSession',
    summary: 'Create a session with its policy (roots, network, shell); its worker starts at once.',
    body: CreateSessionBodySchema,
    bodyOptional: true,
    responses: {
      201: { description: 'The session.', schema: SessionViewSchema, headers: LOCATION },
      400: err('Invalid body, or roots the jail cannot mount (the message says why).'),
      409: err('A session with that id exists.'),
      503: err("No CPython distribution for the server's Python minor (dist.not-found)."),
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
    summary:
      'List sessions, newest first: `?limit=` of them from `?offset=`, no more than fit 4 MiB of JSON ' +
      '(`next_offset` then says where the rest start).',
    query: ListSessionsQuerySchema,
    responses: { 200: { description: 'The sessions.', schema: SessionListSchema }, 400: INVALID },
    handler(c, { engine }) {
      return c.json(engine.listSessionsPage(readQuery(c, ListSessionsQuerySchema)))
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id',
    operationId: 'getSession',
    summary:
      'A session with its last blocks (`?limit=`, default 50; earlier ones with `?before=`), each cut ' +
      'to 65 536 characters (`truncated`: GET the block for all of it), and no more blocks than fit ' +
      '4 MiB of JSON (`blocks_before` counts the rest). `?format=display` adds ' +
      '`code_display` to each block: its code formatted for people (the stored `code` is always what ' +
      'was submitted).',
    query: SessionViewQuerySchema,
    responses: {
      200: { description: 'The session.', schema: SessionDetailSchema },
      400: INVALID,
      404: NOT_FOUND,
    },
    async handler(c, { engine }) {
      const { format, limit, before } = readQuery(c, SessionViewQuerySchema)
      const { detail, spareBytes } = engine.sessionPage(c.req.param('id')!, { limit, before, format })
      // A cut block's code is not the block's: it is shown as it is, not formatted.
      if (format === 'display') {
        await addCodeDisplay(
          detail.id,
          detail.blocks.filter((b) => !b.truncated),
          SESSION_VIEW_BLOCK_CHARS,
          spareBytes,
        )
      }
      return c.json(detail)
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
      'A retried submission with the same Idempotency-Key returns the first one instead of running again. ' +
      'A client that disconnects while waiting stops the block (cancelled or interrupted), unless it sent an ' +
      'Idempotency-Key: that block runs to its end for the retry.',
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
      200: { description: 'The finished block.', schema: BlockViewSchema, headers: BLOCK_HEADERS },
      202: {
        description: 'Accepted; the block is queued or running (follow the events, or GET its Location).',
        schema: BlockViewSchema,
        headers: { ...BLOCK_HEADERS, 'Preference-Applied': '`respond-async`.' },
      },
      400: INVALID,
      404: NOT_FOUND,
      409: err('The session is closed, or its worker was retired.'),
      422: err('The Idempotency-Key was used before for a different block.'),
    },
    async handler(c, { engine }) {
      const reply = await runBlockRoute(engine, c.req.param('id')!, {
        idempotencyKey: c.req.header('idempotency-key'),
        prefer: c.req.header('prefer'),
        text: () => c.req.text(),
        onHangup: (stop) => onHangup(c, stop),
      })
      return c.json(reply.body, reply.status, reply.headers)
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id/blocks/:blockId',
    operationId: 'getBlock',
    summary: 'One block: queued, running or done, with its outcome when done.',
    query: SessionDetailQuerySchema,
    responses: { 200: { description: 'The block.', schema: BlockViewSchema }, 400: INVALID, 404: NOT_FOUND },
    async handler(c, { engine }) {
      const { format } = readQuery(c, SessionDetailQuerySchema)
      const block = getBlockRoute(engine, c.req.param('id')!, c.req.param('blockId')!)
      if (format === 'display') await addCodeDisplay(block.session_id, [block])
      return c.json(block)
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/:id/blocks/:blockId/cancel',
    operationId: 'cancelBlock',
    summary: 'Cancel a queued block: it never runs and finishes with error block.cancelled.',
    responses: {
      200: { description: 'The cancelled block.', schema: BlockViewSchema },
      404: NOT_FOUND,
      409: err('The block is running (interrupt it) or done.'),
    },
    handler(c, { engine }) {
      return c.json(engine.cancelBlock(c.req.param('id')!, c.req.param('blockId')!))
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id/events',
    operationId: 'sessionEvents',
    summary:
      'Server-Sent Events of the session: its blocks (block.started, output, block.finished, interrupt), its ' +
      'worker (worker.retired, worker.replaced, defs.restored), its turns and drafts, and session.closed; every ' +
      'type is in the Event schema. Reconnect with Last-Event-ID (or ?after=) to replay what was missed.',
    query: z.object({ after: z.string().regex(/^\d+$/).optional() }),
    headers: [{ name: 'Last-Event-ID', description: 'The last event id received.', schema: z.string() }],
    description:
      'Each frame is `id: <event id>`, `event: <type>` and `data: <the Event as JSON>`. A replay point ' +
      'older than the kept events first gets a frame `event: gap` (no id) whose data is a GapFrame. ' +
      '`: heartbeat` comments keep the connection alive. After `session.closed` the stream ends, and ' +
      'reconnecting with its id (or later) gets 204, which stops an EventSource. A client that stops ' +
      'reading is disconnected once 10 000 frames or 16 MiB wait for it: reconnect with Last-Event-ID ' +
      'and the missed events are replayed.',
    responses: {
      200: {
        description: 'An event stream; each `data` is one Event (or a GapFrame).',
        schema: SseFrameDataSchema,
        contentType: 'text/event-stream',
      },
      204: { description: 'The session is closed and nothing follows the given event id.' },
      400: err(
        'A Last-Event-ID (http.invalid-header) or ?after= (http.invalid-query) that is not an event id, or ' +
          "is beyond the session's last event.",
      ),
      404: NOT_FOUND,
    },
    handler(c, { engine, sse }) {
      const header = c.req.header('last-event-id')
      const after = parseLastEventId(header, c.req.query('after'))
      const id = c.req.param('id')!
      const view = engine.sessionView(id)
      // Nothing more will ever come: 204 tells an EventSource to stop reconnecting.
      if (view.state === 'closed' && after >= view.last_event_id) return c.body(null, 204)
      refuseBeyondLastEvent(after, header !== undefined, id, view.last_event_id)
      // A client dropped for falling behind loses its connection too: what the socket still
      // buffers for it goes with it (the node adapter puts the response in env).
      const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing
      const onDrop = outgoing ? () => outgoing.destroy() : undefined
      // The stream charges its frames to the server's budget itself (sse.ts), not once more as
      // an answer's writes (answer-budget.ts).
      if (outgoing) budgetsItself(outgoing)
      return sessionEventStream(engine, id, after, { ...sse, onDrop }, c.req.method === 'HEAD')
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/:id/interrupt',
    operationId: 'interrupt',
    summary:
      'Interrupt the running block, if any. With `block_id`, only that block: a queued one is cancelled, ' +
      'and if another block runs by now nothing is interrupted.',
    body: InterruptBodySchema,
    bodyOptional: true,
    responses: {
      200: { description: 'Whether it landed.', schema: InterruptResultSchema },
      400: INVALID,
      404: NOT_FOUND,
    },
    async handler(c, { engine }) {
      const body = await readBody(c, InterruptBodySchema)
      return c.json(await engine.interrupt(c.req.param('id')!, { blockId: body.block_id }))
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id/attachments/:aid',
    operationId: 'getAttachment',
    summary:
      'The bytes of an attachment. A PNG, JPEG, GIF or WebP (known by its bytes, whatever type it claims) ' +
      'is served inline as that type; anything else as a download with its stored media type. Every ' +
      'attachment comes sandboxed (Content-Security-Policy: sandbox, nosniff): opened from its URL, none ' +
      'runs script as this origin.',
    responses: {
      // Any type: the attachment's own (text/plain, image/png...), not a fixed one.
      200: {
        description: 'The bytes.',
        contentType: '*/*',
        headers: {
          'Content-Disposition':
            '`inline` for a raster image the page shows, otherwise `attachment`; with `filename*` when ' +
            'the attachment has a name.',
          'Content-Security-Policy': '`sandbox`: a document made from the bytes runs no script.',
          'X-Content-Type-Options': '`nosniff`.',
        },
      },
      404: NOT_FOUND,
    },
    handler(c, { engine }) {
      const pieces = engine.attachmentPieces(c.req.param('id')!, c.req.param('aid')!)
      const headers = attachmentHeaders(pieces.attachment, pieces.head, pieces.size)
      if (c.req.method === 'HEAD') {
        pieces.close()
        return new Response(null, { status: 200, headers })
      }
      return new Response(attachmentBody(pieces), { status: 200, headers })
    },
  },
  {
    method: 'get',
    path: '/v1/health',
    operationId: 'health',
    summary: 'Liveness; open without a token.',
    responses: { 200: { description: 'Healthy.', schema: HealthSchema } },
    handler(c, { engine }) {
      return c.json(engine.health({ revealPaths: isAuthenticated(c) }))
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
        schema: DoctorReportSchema,
      },
    },
    async handler(c, { engine }) {
      const report = probe()
      const checks = [...report.checks, ...(await egressChecks()), ...engine.extensionChecks()]
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
