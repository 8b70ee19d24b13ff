import { createHash, timingSafeEqual } from 'node:crypto'
import { isIP } from 'node:net'
import type { MiddlewareHandler } from 'hono'
import { VisError } from '../util/errors.js'
import { envelope } from './errors.js'

// Loopback is reachable only from this machine, so it needs no token; any other address does.
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (h === 'localhost' || h === 'ip6-localhost') return true
  if (isIP(h) === 4) return h.startsWith('127.')
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h)
  return false
}

// Refuses to serve a non-loopback address without a token, before anything listens.
export function requireTokenFor(host: string, token: string | undefined): void {
  if (isLoopbackHost(host)) return
  if (token === undefined || token.length === 0) {
    throw new VisError(
      'http.token-required',
      `Binding to ${host} exposes the API beyond this machine; set VIS_TOKEN to a secret bearer token, or bind to 127.0.0.1.`,
      { host },
    )
  }
  if (token.length < 16) {
    throw new VisError('http.token-weak', 'VIS_TOKEN must be at least 16 characters long.', { host })
  }
}

// Compared as hashes so the comparison takes the same time whatever the lengths.
const digest = (s: string) => createHash('sha256').update(s).digest()

// Bearer auth when a token is configured. /v1/health stays open so a supervisor can probe it.
export function bearerAuth(token: string | undefined): MiddlewareHandler {
  const want = token ? digest(token) : undefined
  return async (c, next) => {
    if (!want || c.req.path === '/v1/health') return next()
    const header = c.req.header('authorization') ?? ''
    const m = /^Bearer\s+(.+)$/i.exec(header)
    if (!m || !timingSafeEqual(digest(m[1]!.trim()), want)) {
      c.header('WWW-Authenticate', 'Bearer realm="vis"')
      return c.json(envelope('http.unauthorized', 'Send Authorization: Bearer <VIS_TOKEN>.'), 401)
    }
    return next()
  }
}
