import { hash, timingSafeEqual } from 'node:crypto'
import type { Context } from 'hono'
import { parse, serialize } from 'hono/utils/cookie'
import { errorAnswer } from '../errors.js'
import type { GuardRequest, Refusal } from './refusal.js'

// Like Jupyter: the token travels as `Authorization: Bearer` (clients), as `?token=` (the URL
// `vis serve` prints, and an EventSource, which cannot set headers), or as a cookie that visiting
// that URL sets, so the page and its event stream keep working without the token in sight.
// The cookie is HttpOnly (no script reads it) and SameSite=Strict (no other site's page sends it).

// Compared as hashes so the comparison takes the same time whatever the lengths. One-shot
// crypto.hash: every request to the block route hashes the token it sent, and a Hash object
// (createHash().update().digest()) cost that route about twice as much.
const digest = (s: string) => hash('sha256', s, 'buffer')

// Per token, so two servers on one host (cookies ignore ports) do not overwrite each other's.
export const tokenCookieName = (token: string) => `vis_token_${digest(token).subarray(0, 4).toString('hex')}`

// Routes open without a token: a supervisor's liveness probe.
const OPEN_PATHS = new Set(['/v1/health'])

const authenticated = new WeakMap<object, boolean>()

// Whether this request proved the token (true for every request when no token is configured).
export const isAuthenticated = (c: Context): boolean => authenticated.get(c.req.raw) ?? false
export const markAuthenticated = (c: Context, ok: boolean): void => {
  authenticated.set(c.req.raw, ok)
}

const isNavigation = (req: GuardRequest) =>
  req.method === 'GET' &&
  (req.header('sec-fetch-mode') === 'navigate' || (req.header('accept') ?? '').includes('text/html'))

// The token check's answer: whether the request proved the token, and a refusal (401, or the
// 303 that moves a token from the URL into the cookie) when the route must not run.
export type TokenVerdict = { authenticated: boolean; refusal?: Refusal }

const OPEN: TokenVerdict = { authenticated: true }

export function tokenGate(token: string | undefined): (req: GuardRequest) => TokenVerdict {
  if (!token) return () => OPEN
  const want = digest(token)
  const cookie = tokenCookieName(token)
  const matches = (candidate: string | undefined) =>
    candidate !== undefined && candidate !== '' && timingSafeEqual(digest(candidate), want)
  const message = 'Send Authorization: Bearer <token>, or open the URL with ?token= that `vis serve` printed.'
  return (req) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(req.header('authorization') ?? '')?.[1]?.trim()
    const query = req.query('token')
    const cookies = req.header('cookie')
    const ok =
      matches(bearer) || matches(query) || (cookies !== undefined && matches(parse(cookies, cookie)[cookie]))
    if (ok && matches(query) && isNavigation(req)) {
      // Visiting the printed URL: keep the token in a cookie and drop it from the address bar.
      const url = new URL(req.url)
      url.searchParams.delete('token')
      const headers = {
        'Set-Cookie': serialize(cookie, token, { httpOnly: true, sameSite: 'Strict', path: '/' }),
        Location: `${url.pathname}${url.search}`,
      }
      return { authenticated: true, refusal: { status: 303, headers } }
    }
    if (ok || OPEN_PATHS.has(req.path)) return { authenticated: ok }
    const headers = { 'WWW-Authenticate': 'Bearer realm="vis"' }
    if (isNavigation(req)) {
      const html = `<!doctype html><title>vis: token needed</title><p>${message.replace(/</g, '&lt;')}</p>`
      return { authenticated: false, refusal: { status: 401, headers, html } }
    }
    return {
      authenticated: false,
      refusal: { ...errorAnswer('http.unauthorized', message), headers },
    }
  }
}
