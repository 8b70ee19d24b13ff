import type { Context } from 'hono'
import type { ContentfulStatusCode, StatusCode } from 'hono/utils/http-status'
import type { ErrorEnvelope } from '../errors.js'

// A request as the guards see it: what hono's Context offers and what the fast routes
// (src/http/fast-routes) read off Node's IncomingMessage, so both call the very same checks.
export type GuardRequest = {
  method: string
  // Path without the query.
  path: string
  // The full URL (scheme, host, path, query).
  url: string
  // By lower-case name.
  header(name: string): string | undefined
  query(name: string): string | undefined
}

// A guard's answer instead of the route's: a status with an error envelope, an HTML page (a
// browser navigation), or no body (a CORS preflight, a redirect).
export type Refusal = {
  status: StatusCode
  headers?: Record<string, string>
  json?: ErrorEnvelope
  html?: string
}

export const HTML_TYPE = 'text/html; charset=UTF-8'

// The refusal as hono's response (the fast routes write the same through Node: fast-routes/reply.ts).
export function refuse(c: Context, r: Refusal): Response {
  if (r.json !== undefined) return c.json(r.json, r.status as ContentfulStatusCode, r.headers)
  if (r.html !== undefined) return c.html(r.html, r.status as ContentfulStatusCode, r.headers)
  return c.body(null, r.status, r.headers)
}

// What hono's Context offers, as a GuardRequest.
export function guardRequestOf(c: Context): GuardRequest {
  return {
    method: c.req.method,
    path: c.req.path,
    url: c.req.url,
    header: (name) => c.req.header(name),
    query: (name) => c.req.query(name),
  }
}
