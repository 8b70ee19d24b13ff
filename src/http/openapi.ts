import type { z } from 'zod'
import {
  AttachmentViewSchema,
  BlockViewSchema,
  CreateSessionBodySchema,
  ExtensionListSchema,
  InterruptBodySchema,
  InterruptResultSchema,
  RunBlockBodySchema,
  SessionDetailSchema,
  SessionListSchema,
  SessionViewSchema,
} from '../engine/schemas.js'
import { type JsonSchema, type SchemaRefs, toJsonSchema, withRefs } from '../util/json-schema.js'
import { ErrorEnvelopeSchema } from './errors.js'
import { EventSchemas, GapFrameSchema, SessionEventSchema } from './event-schemas.js'
import { DoctorReportSchema, HealthSchema, openApiPath, type RouteSpec } from './routes.js'

export const OPENAPI_PATH = '/v1/openapi.json'

const pascal = (s: string) => s.replace(/(^|[-.])(\w)/g, (_, __, c: string) => c.toUpperCase())

// The names generated clients see. Responses are named in their output form, request bodies in
// their input form (fields with defaults may be left out).
function namedSchemas(): SchemaRefs['names'] {
  const out: [z.ZodTypeAny, string][] = [
    [SessionViewSchema, 'Session'],
    [SessionDetailSchema, 'SessionDetail'],
    [SessionListSchema, 'SessionList'],
    [BlockViewSchema, 'Block'],
    [AttachmentViewSchema, 'Attachment'],
    [ErrorEnvelopeSchema, 'Error'],
    [SessionEventSchema, 'Event'],
    [GapFrameSchema, 'GapFrame'],
    [InterruptResultSchema, 'InterruptResult'],
    [ExtensionListSchema, 'ExtensionList'],
    [DoctorReportSchema, 'DoctorReport'],
    [HealthSchema, 'Health'],
    ...EventSchemas.map((s): [z.ZodTypeAny, string] => [s, `${pascal(s.shape.type.value)}Event`]),
  ]
  const names: SchemaRefs['names'] = new Map(out.map(([s, name]) => [s, { name, mode: 'output' }]))
  names.set(CreateSessionBodySchema, { name: 'CreateSessionRequest', mode: 'input' })
  names.set(RunBlockBodySchema, { name: 'RunBlockRequest', mode: 'input' })
  names.set(InterruptBodySchema, { name: 'InterruptRequest', mode: 'input' })
  return names
}

// What every route may answer besides its own: the browser guards and the auth in front of all.
const COMMON_RESPONSES: Record<string, { description: string }> = {
  401: { description: 'No valid token (Authorization: Bearer or ?token=).' },
  403: {
    description: 'Sent by a web page whose origin is neither this server nor a configured CORS origin.',
  },
  421: { description: 'The Host header names no host this server answers to (DNS rebinding).' },
  // Any route can meet these: declared so a client's error type covers every status it may see.
  500: {
    description: 'An internal failure (http.internal, the store, a worker); the message says what failed.',
  },
  503: {
    description:
      'The server is shutting down (engine.closed; retry against its successor), or holds as many ' +
      'connections as it allows, in total or from this client (http.too-many-connections, ' +
      'http.too-many-peer-connections; retry after Retry-After).',
  },
}
// Every route refuses a query parameter it does not know (route-query.ts).
const QUERY_RESPONSES: Record<string, { description: string }> = {
  400: { description: 'Invalid request: an unknown query parameter (details.parameters names it).' },
}
// Any request but a GET may carry a body, so the body guards answer there even where the route reads none.
const BODY_RESPONSES: Record<string, { description: string }> = {
  408: { description: 'The body did not arrive in time after the headers (http.body-timeout).' },
  413: { description: 'The body is larger than the limit.' },
  415: { description: 'The body is not application/json.' },
}

const errorRef = { $ref: '#/components/schemas/Error' }
const responseRef = (status: string) => ({ $ref: `#/components/responses/E${status}` })

// The OpenAPI 3.1 document of exactly the routes the server mounts, from their zod schemas.
export function openApiDocument(routes: readonly RouteSpec[], version: string, secured: boolean) {
  const refs: SchemaRefs = { names: namedSchemas(), defs: {} }
  const paths = withRefs(refs, () => {
    const paths: Record<string, Record<string, unknown>> = {}
    for (const r of routes) {
      const key = openApiPath(r.path)
      paths[key] ??= {}
      paths[key][r.method] = operation(r)
    }
    // Named even where no route uses them (the SSE frames are described, not typed, by 3.1).
    for (const [schema, { mode }] of refs.names) toJsonSchema(schema, mode)
    return paths
  })
  paths[OPENAPI_PATH] = {
    get: {
      operationId: 'openapi',
      summary: 'This document.',
      responses: sortByStatus({
        200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } },
        ...Object.fromEntries(
          Object.keys({ ...COMMON_RESPONSES, ...QUERY_RESPONSES }).map((s) => [s, responseRef(s)]),
        ),
      }),
    },
  }
  const errorResponses = Object.fromEntries(
    Object.entries({ ...COMMON_RESPONSES, ...QUERY_RESPONSES, ...BODY_RESPONSES }).map(([status, r]) => [
      `E${status}`,
      {
        description: r.description,
        ...(status === '401'
          ? { headers: responseHeaders({ 'WWW-Authenticate': '`Bearer realm="vis"`.' }) }
          : {}),
        content: { 'application/json': { schema: errorRef } },
      },
    ]),
  )
  return {
    openapi: '3.1.0',
    info: {
      title: 'vis-runtime',
      version,
      description:
        'Sessions of an embedded, confined CPython. Errors are one envelope: {"error": {"code", "message", "details"}}. ' +
        "Requests must name a loopback host (or a configured one), come from no web page but the server's own " +
        '(or a configured CORS origin), and carry JSON bodies.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'This server.' }],
    paths,
    components: {
      schemas: refs.defs,
      responses: errorResponses,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'The token `vis serve` printed, or VIS_TOKEN.',
        },
        token: {
          type: 'apiKey',
          in: 'query',
          name: 'token',
          description:
            'The same token in the URL, for clients that cannot set headers (EventSource, the page).',
        },
      },
    },
    // With a token configured, either form; without one, none is needed ({}) and either is ignored.
    security: secured ? [{ bearer: [] }, { token: [] }] : [{}, { bearer: [] }, { token: [] }],
  }
}

function operation(r: RouteSpec): Record<string, unknown> {
  const params: JsonSchema[] = [...r.path.matchAll(/:([A-Za-z_]\w*)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }))
  if (r.query) {
    for (const [name, s] of Object.entries(r.query.shape as Record<string, z.ZodTypeAny>)) {
      params.push({ name, in: 'query', required: !s.isOptional(), schema: toJsonSchema(s, 'input') })
    }
  }
  for (const h of r.headers ?? []) {
    params.push({
      name: h.name,
      in: 'header',
      required: false,
      description: h.description,
      schema: toJsonSchema(h.schema, 'input'),
    })
  }
  const responses: Record<string, unknown> = {}
  for (const [status, spec] of Object.entries(r.responses)) {
    if (spec.schema === undefined && spec.contentType === undefined) {
      responses[status] = { description: spec.description }
      continue
    }
    const type = spec.contentType ?? 'application/json'
    const schema = spec.schema ? toJsonSchema(spec.schema, 'output') : binaryOrText(type)
    responses[status] = {
      description: spec.description,
      ...(spec.headers ? { headers: responseHeaders(spec.headers) } : {}),
      content: { [type]: { schema } },
    }
  }
  const common = r.path === '/v1/health' ? { ...COMMON_RESPONSES, 401: undefined } : COMMON_RESPONSES
  const guarded = { ...common, ...QUERY_RESPONSES, ...(r.method !== 'get' ? BODY_RESPONSES : {}) }
  for (const [status, value] of Object.entries(guarded)) {
    if (value && responses[status] === undefined) responses[status] = responseRef(status)
  }
  const op: Record<string, unknown> = {
    operationId: r.operationId,
    summary: r.summary,
    ...(r.description ? { description: r.description } : {}),
    parameters: params,
    responses: sortByStatus(responses),
  }
  if (r.body) {
    op.requestBody = {
      required: r.bodyOptional !== true,
      content: { 'application/json': { schema: toJsonSchema(r.body, 'input') } },
    }
  }
  if (r.path === '/v1/health') op.security = [{}]
  return op
}

// Location and WWW-Authenticate come with every such answer, and an attachment's sandbox
// headers with every attachment; the others only when they apply.
const ALWAYS_SENT = new Set([
  'Location',
  'WWW-Authenticate',
  'Content-Disposition',
  'Content-Security-Policy',
  'X-Content-Type-Options',
])
const responseHeaders = (headers: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(headers).map(([name, description]) => [
      name,
      { description, required: ALWAYS_SENT.has(name), schema: { type: 'string' } },
    ]),
  )

const binaryOrText = (type: string): JsonSchema =>
  type.startsWith('text/') || type === '*/*' ? { type: 'string' } : { type: 'string', contentMediaType: type }

const sortByStatus = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => Number(a) - Number(b)))
