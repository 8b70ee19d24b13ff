import { createHash, timingSafeEqual } from 'node:crypto'
import type { Context, MiddlewareHandler } from 'hono'
import { getCookie, setCookie } from 'hono/cookie'
import { envelope } from '../errors.js'

// Like Jupyter: the token travels as `Authorization: Bearer` (clients), as `?token=` (the URL
// `vis serve` prints, and an EventSource, which cannot set headers), or as a cookie that visiting
// that URL sets, so the page and its event stream keep working without the token in sight.
// The cookie is HttpOnly (no script reads it) and SameSite=Strict (no other site's page sends it).

// Compared as hashes so the comparison takes the same time whatever the lengths.
const digest = (s: string) => createHash('sha256').update(s).digest()

// Per token, so two servers on one host (cookies ignore ports) do not overwrite each other's.
export const tokenCookieName = (token: string) => `vis_token_${digest(token).subarray(0, 4).toString('hex')}`

// Routes open without a token: a supervisor's liveness probe.
const OPEN_PATHS = new Set(['/v1/health'])

const authenticated = new WeakMap<Request, boolean>()

// Whether this request proved the token (true for every request when no token is configured).
export const isAuthenticated = (c: Context): boolean => authenticated.get(c.req.raw) ?? false

const isNavigation = (c: Context) =>
  c.req.method === 'GET' &&
  (c.req.header('sec-fetch-mode') === 'navigate' || (c.req.header('accept') ?? '').includes('text/html'))

export function tokenAuth(token: string | undefined): MiddlewareHandler {
  if (!token) {
    return async (c, next) => {
      authenticated.set(c.req.raw, true)
      return next()
    }
  }
  const want = digest(token)
  const cookie = tokenCookieName(token)
  const matches = (candidate: string | undefined) =>
    candidate !== undefined && candidate !== '' && timingSafeEqual(digest(candidate), want)
  return async (c, next) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim()
    const query = c.req.query('token')
    const ok = matches(bearer) || matches(query) || matches(getCookie(c, cookie))
    authenticated.set(c.req.raw, ok)
    if (ok && matches(query) && isNavigation(c)) {
      // Visiting the printed URL: keep the token in a cookie and drop it from the address bar.
      setCookie(c, cookie, token, { httpOnly: true, sameSite: 'Strict', path: '/' })
      const url = new URL(c.req.url)
      url.searchParams.delete('token')
      return c.redirect(`${url.pathname}${url.search}`, 303)
    }
    if (ok || OPEN_PATHS.has(c.req.path)) return next()
    c.header('WWW-Authenticate', 'Bearer realm="vis"')
    const message =
      'Send Authorization: Bearer <token>, or open the URL with ?token= that `vis serve` printed.'
    if (isNavigation(c)) {
      return c.html(
        `<!doctype html><title>vis: token needed</title><p>${message.replace(/</g, '&lt;')}</p>`,
        401,
      )
    }
    return c.json(envelope('http.unauthorized', message), 401)
  }
}
