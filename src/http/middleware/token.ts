import { hash, timingSafeEqual } from 'node:crypto'
import type { Context } from 'hono'
import { errorAnswer } from '../errors.js'
import { PAGE_PATHS } from '../page/index.js'
import type { GuardRequest, Refusal } from './refusal.js'

// The token travels as `Authorization: Bearer` (clients, and the session page's own fetches) or
// as `?token=` (the URL `vis serve` prints). Never as a cookie: browsers scope cookies by host,
// not port, so a cookie set by http://127.0.0.1:7878 is sent to every other server on 127.0.0.1
// (SameSite does not help: another port is the same site), which could replay it from outside the
// browser. The page keeps the token in localStorage instead, which is per scheme+host+port.

// Compared as hashes so the comparison takes the same time whatever the lengths. One-shot
// crypto.hash: every request to the block route hashes the token it sent, and a Hash object
// (createHash().update().digest()) cost that route about twice as much.
const digest = (s: string) => hash('sha256', s, 'buffer')

// Routes open without a token: a supervisor's liveness probe. The page's own files (GET only)
// are open too: they are the installed package's static files, hold no data, and the page must
// load before its script can read the token from the URL or from localStorage.
const OPEN_PATHS = new Set(['/v1/health'])
const isOpen = (req: GuardRequest) =>
  OPEN_PATHS.has(req.path) || ((req.method === 'GET' || req.method === 'HEAD') && PAGE_PATHS.has(req.path))

const authenticated = new WeakMap<object, boolean>()

// Whether this request proved the token (true for every request when no token is configured).
export const isAuthenticated = (c: Context): boolean => authenticated.get(c.req.raw) ?? false
export const markAuthenticated = (c: Context, ok: boolean): void => {
  authenticated.set(c.req.raw, ok)
}

const isNavigation = (req: GuardRequest) =>
  req.method === 'GET' &&
  (req.header('sec-fetch-mode') === 'navigate' || (req.header('accept') ?? '').includes('text/html'))

// The token check's answer: whether the request proved the token, and a refusal (401) when the
// route must not run.
export type TokenVerdict = { authenticated: boolean; refusal?: Refusal }

const OPEN: TokenVerdict = { authenticated: true }

export function tokenGate(token: string | undefined): (req: GuardRequest) => TokenVerdict {
  if (!token) return () => OPEN
  const want = digest(token)
  const matches = (candidate: string | undefined) =>
    candidate !== undefined && candidate !== '' && timingSafeEqual(digest(candidate), want)
  const message = 'Send Authorization: Bearer <token>, or open the URL with ?token= that `vis serve` printed.'
  return (req) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(req.header('authorization') ?? '')?.[1]?.trim()
    const query = req.query('token')
    const ok = matches(bearer) || matches(query)
    if (ok || isOpen(req)) return { authenticated: ok }
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
