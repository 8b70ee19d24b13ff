import type { MiddlewareHandler } from 'hono'
import { bodyLimit as streamingBodyLimit } from 'hono/body-limit'
import { errorAnswer } from '../errors.js'
import { type Refusal, refuse } from './refusal.js'

const tooLarge = (maxSize: number): Refusal =>
  errorAnswer('http.body-too-large', `Request bodies are limited to ${maxSize} bytes.`, { limit: maxSize })

// A body whose Content-Length is past the limit: 413. Node's parser never delivers more bytes
// than a request declares, so the header alone decides; a chunked body (no length) is not judged
// here (bodyLimit below streams it).
export function declaredBodyRefusal(length: string | undefined, maxSize: number): Refusal | undefined {
  if (length !== undefined && Number.parseInt(length, 10) > maxSize) return tooLarge(maxSize)
  return undefined
}

// The request size limit, without building a WHATWG Request for every request. Hono's own
// bodyLimit starts by reading `c.req.raw.body`, which makes @hono/node-server construct the full
// Request (headers, abort signal, body stream): about 6% of a trivial block's CPU. Only a chunked
// body, whose size is unknown until read, goes through that streaming check.
export function bodyLimit(maxSize: number): MiddlewareHandler {
  const streaming = streamingBodyLimit({ maxSize, onError: (c) => refuse(c, tooLarge(maxSize)) })
  return async (c, next) => {
    if (c.req.header('transfer-encoding') !== undefined) return streaming(c, next)
    const refusal = declaredBodyRefusal(c.req.header('content-length'), maxSize)
    return refusal ? refuse(c, refusal) : next()
  }
}
