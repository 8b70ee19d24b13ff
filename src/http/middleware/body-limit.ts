import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit as streamingBodyLimit } from 'hono/body-limit'

// The request size limit, without building a WHATWG Request for every request. Hono's own
// bodyLimit starts by reading `c.req.raw.body`, which makes @hono/node-server construct the full
// Request (headers, abort signal, body stream): about 6% of a trivial block's CPU. A body with a
// Content-Length is judged by that header alone (Node's parser never delivers more bytes than it
// declares); only a chunked body, whose size is unknown until read, goes through the streaming check.
export function bodyLimit(maxSize: number, onError: (c: Context) => Response): MiddlewareHandler {
  const streaming = streamingBodyLimit({ maxSize, onError })
  return async (c, next) => {
    if (c.req.header('transfer-encoding') !== undefined) return streaming(c, next)
    const length = c.req.header('content-length')
    if (length !== undefined && Number.parseInt(length, 10) > maxSize) return onError(c)
    return next()
  }
}
