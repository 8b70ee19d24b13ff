import { errorAnswer } from '../errors.js'
import type { GuardRequest, Refusal } from './refusal.js'

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

export function corsAllowList(opts: OriginCheckOptions = {}): ReadonlySet<string> {
  const listed = new Set<string>()
  for (const o of opts.corsOrigins ?? []) {
    const n = normaliseOrigin(o)
    if (n === undefined) throw new Error(`not an http(s) origin: ${o}`)
    listed.add(n)
  }
  return listed
}

// The origin check's answer: a refusal (403, or the 204 of a CORS preflight), or the CORS
// headers every response to an allowed cross-origin request carries (none for same-origin).
export type OriginVerdict = { refusal?: Refusal; cors?: Record<string, string> }

const PASS: OriginVerdict = {}

export function originVerdict(listed: ReadonlySet<string>, req: GuardRequest): OriginVerdict {
  const origin = req.header('origin')
  if (origin === undefined) return PASS
  const protocol = req.url.slice(0, req.url.indexOf(':') + 1)
  const own = normaliseOrigin(`${protocol}//${req.header('host') ?? ''}`)
  const n = normaliseOrigin(origin)
  if (n !== undefined && n === own) return PASS
  if (n === undefined || !listed.has(n)) {
    return {
      refusal: errorAnswer(
        'http.origin-not-allowed',
        `Requests from the web page at ${origin} are refused; allow it with --cors-origin ${origin} if it is yours.`,
        { origin },
      ),
    }
  }
  const cors = {
    'Access-Control-Allow-Origin': n,
    Vary: 'Origin',
    'Access-Control-Expose-Headers': EXPOSE_HEADERS,
  }
  if (req.method === 'OPTIONS' && req.header('access-control-request-method')) {
    const preflight = {
      'Access-Control-Allow-Methods': ALLOW_METHODS,
      'Access-Control-Allow-Headers': ALLOW_HEADERS,
      'Access-Control-Max-Age': '600',
    }
    return { cors, refusal: { status: 204, headers: preflight } }
  }
  return { cors }
}
