import type { MiddlewareHandler } from 'hono'
import { jsonBodiesOnly } from './content-type.js'
import { type HostCheckOptions, hostCheck } from './host.js'
import { type OriginCheckOptions, originCheck } from './origin.js'
import { tokenAuth } from './token.js'

export { jsonBodiesOnly } from './content-type.js'
export { hostCheck, hostName, isLoopbackName } from './host.js'
export { originCheck } from './origin.js'
export { isAuthenticated, tokenAuth, tokenCookieName } from './token.js'

export type GuardOptions = HostCheckOptions & OriginCheckOptions & { token?: string }

// What keeps a web page in the user's browser from driving the server, in order: a name we
// answer to (DNS rebinding), a page we trust (cross-origin requests and CORS preflight), a JSON
// body (the content types a page may send without asking), then the token. Mounted app-wide with
// `app.use('*')`, so every route, present or added later, gets the same rules.
export function browserGuards(opts: GuardOptions): MiddlewareHandler[] {
  return [hostCheck(opts), originCheck(opts), jsonBodiesOnly(), tokenAuth(opts.token)]
}
