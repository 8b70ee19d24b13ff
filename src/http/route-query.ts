import type { Context } from 'hono'
import type { AnyZodObject } from 'zod'
import { VisError } from '../util/errors.js'

// A query parameter no route knows is refused the same way on every route, as the routes with a
// query schema already refuse theirs (routes.ts readQuery): a typo such as `?afer=5` on the events
// route would otherwise be ignored and replay the whole history. `token` belongs to the auth
// middleware on every route (the page's URL and an EventSource carry it).
export function checkKnownQuery(c: Context, query?: AnyZodObject): void {
  const known = query ? Object.keys(query.shape) : []
  const all = c.req.queries()
  const unknown = Object.keys(all).filter((k) => k !== 'token' && !known.includes(k))
  // `?limit=1&limit=2`: the route reads one value, and which one the client meant is a guess.
  const repeated = known.filter((k) => (all[k]?.length ?? 0) > 1)
  if (unknown.length === 0 && repeated.length === 0) return
  const hint = known.length > 0 ? `known: ${known.join(', ')}` : 'this route takes none'
  const issues = [
    ...unknown.map((path) => ({ path, message: `unknown query parameter; ${hint}` })),
    ...repeated.map((path) => ({ path, message: `given ${all[path]!.length} times; give it once` })),
  ]
  throw new VisError(
    'http.invalid-query',
    `Invalid query parameter ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}.`,
    { parameters: issues.map((i) => i.path), issues },
  )
}
