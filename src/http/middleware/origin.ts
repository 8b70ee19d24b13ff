import type { MiddlewareHandler } from 'hono'
import { envelope } from '../errors.js'

// A browser names the page behind every cross-origin request (and every POST) in `Origin`. Only
// the server's own origin and the configured CORS allow-list may drive it; a page elsewhere gets
// 403 before any route runs, whatever the request's content type or "no-cors" mode.

const ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS'
const ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key, Prefer, Last-Event-ID'
const EXPOSE_HEADERS = 'Location, Idempotent-Replayed, Preference-Applied, Retry-After'

export type OriginCheckOptions = {
  // Origins (scheme://host[:port]) allowed to call the API from a browser, e.g. a dev UI.
  corsOrigins?: readonly string[]
}

// `http://Example.test:80` → `http://example.test`: origins compare in their serialised form.
export function normaliseOrigin(origin: string): string | undefined {
  try {
    const u = new URL(origin)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined
    return u.origin
  } catch {
    return undefined
  }
}

export function originCheck(opts: OriginCheckOptions = {}): MiddlewareHandler {
  const listed = new Set<string>()
  for (const o of opts.corsOrigins ?? []) {
    const n = normaliseOrigin(o)
    if (n === undefined) throw new Error(`not an http(s) origin: ${o}`)
    listed.add(n)
  }
  return async (c, next) => {
    const origin = c.req.header('origin')
    if (origin === undefined) return next()
    const own = normaliseOrigin(`${new URL(c.req.url).protocol}//${c.req.header('host') ?? ''}`)
    const n = normaliseOrigin(origin)
    if (n !== undefined && n === own) return next()
    if (n === undefined || !listed.has(n)) {
      return c.json(
        envelope(
          'http.origin-not-allowed',
          `Requests from the web page at ${origin} are refused; allow it with --cors-origin ${origin} if it is yours.`,
          { origin },
        ),
        403,
      )
    }
    c.header('Access-Control-Allow-Origin', n)
    c.header('Vary', 'Origin')
    c.header('Access-Control-Expose-Headers', EXPOSE_HEADERS)
    if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) {
      c.header('Access-Control-Allow-Methods', ALLOW_METHODS)
      c.header('Access-Control-Allow-Headers', ALLOW_HEADERS)
      c.header('Access-Control-Max-Age', '600')
      return c.body(null, 204)
    }
    return next()
  }
}
