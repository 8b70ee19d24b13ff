import type { MiddlewareHandler } from 'hono'
import { contentTypeRefusal } from './content-type.js'
import { type HostCheckOptions, hostAllowList, hostRefusal } from './host.js'
import { corsAllowList, type OriginCheckOptions, originVerdict } from './origin.js'
import { type GuardRequest, guardRequestOf, type Refusal, refuse } from './refusal.js'
import { markAuthenticated, tokenGate } from './token.js'

export { declaredBodyRefusal } from './body-limit.js'
export { hostName, isLoopbackName } from './host.js'
export type { GuardRequest, Refusal } from './refusal.js'
export { isAuthenticated } from './token.js'

export type GuardOptions = HostCheckOptions & OriginCheckOptions & { token?: string }

// What the guards decided: a refusal to answer instead of the route, the CORS headers every
// answer to an allowed cross-origin request carries, and whether the request proved the token.
export type GuardVerdict = { refusal?: Refusal; cors?: Record<string, string>; authenticated: boolean }

// What keeps a web page in the user's browser from driving the server, in order: a name we
// answer to (DNS rebinding), a page we trust (cross-origin requests and CORS preflight), a JSON
// body (the content types a page may send without asking), then the token. Pure: hono's
// middleware (browserGuards) and the fast routes (src/http/fast-routes) both call this one function.
export function requestGuards(opts: GuardOptions): (req: GuardRequest) => GuardVerdict {
  const hosts = hostAllowList(opts)
  const origins = corsAllowList(opts)
  const token = tokenGate(opts.token)
  return (req) => {
    const host = hostRefusal(hosts, req.header('host'))
    if (host) return { refusal: host, authenticated: false }
    const { refusal: origin, cors } = originVerdict(origins, req)
    if (origin) return { refusal: origin, cors, authenticated: false }
    const type = contentTypeRefusal(req)
    if (type) return { refusal: type, cors, authenticated: false }
    const { refusal, authenticated } = token(req)
    return { refusal, cors, authenticated }
  }
}

// The guards as hono middleware, mounted app-wide with `app.use('*')`, so every route, present or
// added later, gets the same rules.
export function browserGuards(opts: GuardOptions): MiddlewareHandler {
  const guard = requestGuards(opts)
  return async (c, next) => {
    const verdict = guard(guardRequestOf(c))
    if (verdict.cors) for (const [name, value] of Object.entries(verdict.cors)) c.header(name, value)
    markAuthenticated(c, verdict.authenticated)
    return verdict.refusal ? refuse(c, verdict.refusal) : next()
  }
}
