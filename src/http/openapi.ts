import { toJsonSchema } from './json-schema.js'
import { openApiPath, type RouteSpec } from './routes.js'

export const OPENAPI_PATH = '/v1/openapi.json'

// The OpenAPI 3.1 document of exactly the routes the server mounts, from their zod schemas.
export function openApiDocument(routes: readonly RouteSpec[], version: string, secured: boolean) {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of routes) {
    const params = [...r.path.matchAll(/:([A-Za-z_]\w*)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }))
    const query = r.query
      ? Object.entries(r.query.shape as Record<string, import('zod').ZodTypeAny>).map(([name, s]) => ({
          name,
          in: 'query',
          required: !s.isOptional(),
          schema: toJsonSchema(s, 'input'),
        }))
      : []
    const headers = (r.headers ?? []).map((h) => ({
      name: h.name,
      in: 'header',
      required: false,
      description: h.description,
      schema: toJsonSchema(h.schema, 'input'),
    }))
    const responses: Record<string, unknown> = {}
    for (const [status, spec] of Object.entries(r.responses)) {
      const type = spec.contentType ?? 'application/json'
      responses[status] = {
        description: spec.description,
        content: { [type]: { schema: spec.schema ? toJsonSchema(spec.schema, 'output') : {} } },
      }
    }
    const op: Record<string, unknown> = {
      operationId: r.operationId,
      summary: r.summary,
      parameters: [...params, ...query, ...headers],
      responses,
    }
    if (r.body) {
      op.requestBody = {
        required: false,
        content: { 'application/json': { schema: toJsonSchema(r.body, 'input') } },
      }
    }
    if (r.path === '/v1/health') op.security = []
    const key = openApiPath(r.path)
    paths[key] ??= {}
    paths[key][r.method] = op
  }
  paths[OPENAPI_PATH] = {
    get: {
      operationId: 'openapi',
      summary: 'This document.',
      parameters: [],
      responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: {} } } } },
    },
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'vis-runtime',
      version,
      description:
        'Sessions of an embedded, confined CPython. Errors are one envelope: {"error": {"code", "message", "details"}}.',
    },
    paths,
    components: secured
      ? { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'VIS_TOKEN' } } }
      : {},
    ...(secured ? { security: [{ bearer: [] }] } : {}),
  }
}
