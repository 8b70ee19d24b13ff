import type { MiddlewareHandler } from 'hono'
import { envelope } from '../errors.js'

// Every request body is JSON. Refusing anything else also refuses what a browser may send across
// origins without a preflight (text/plain, form encodings, multipart).
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

const hasBody = (h: (name: string) => string | undefined) => {
  const length = h('content-length')
  return (length !== undefined && length.trim() !== '0') || h('transfer-encoding') !== undefined
}

export function jsonBodiesOnly(): MiddlewareHandler {
  return async (c, next) => {
    const type = c.req.header('content-type')
    const header = (name: string) => c.req.header(name)
    // A content type is judged even on an empty body: a form post with nothing in it is still a form.
    if ((type !== undefined && !JSON_TYPE.test(type)) || (type === undefined && hasBody(header))) {
      return c.json(
        envelope(
          'http.unsupported-media-type',
          `Request bodies must be JSON: send Content-Type: application/json${type ? `, not ${type}` : ''}.`,
          { contentType: type ?? null },
        ),
        415,
      )
    }
    return next()
  }
}
