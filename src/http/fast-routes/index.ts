import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Engine } from '../../engine/engine.js'
import { getBlockRoute, runBlockRoute } from '../block-route.js'
import { errorReply } from '../errors.js'
import type { OnHangup } from '../hangup.js'
import {
  declaredBodyRefusal,
  type GuardOptions,
  type GuardRequest,
  requestGuards,
} from '../middleware/index.js'
import { duringShutdown } from '../shutdown.js'
import { sendJson, sendRefusal } from './reply.js'

// The hot routes — POST /v1/sessions/{id}/blocks and GET /v1/sessions/{id}/blocks/{blockId} —
// answered straight from Node's request listener, without hono's router, Context, middleware
// chain and WHATWG Request/Response: what hono added on top of Node's own HTTP work was most of
// the route's HTTP cost (docs/performance.md has the same-run figures). Only an
// ordinary request is taken: the exact path with plain ids (no percent-escapes, no dot segments),
// the route's method, no query string, no chunked body. Everything else, decided from the request
// line and headers before a byte of the body is read, goes to hono untouched. The guards and the
// routes' behaviour are the very functions hono's middleware and handlers call
// (middleware/index.ts requestGuards, block-route.ts); test/http/fast-routes.test.ts sends the
// same requests to a server with and without this path and compares the answers.

export type FastRoutesOptions = GuardOptions & { maxBodyBytes: number }

export type FastRoutes = {
  // Answers the request and returns true, or returns false having touched nothing.
  handle(req: IncomingMessage, res: ServerResponse): boolean
  // Requests answered here (tests check the path they drive is this one).
  served: number
}

const ID = '[A-Za-z0-9_-][A-Za-z0-9_.-]*'
const BLOCKS = new RegExp(`^/v1/sessions/(${ID})/blocks(?:/(${ID}))?$`)
// The Host values @hono/node-server takes as they are (its reValidHost): a lower-case name or
// IPv4 address, with a port of four or five digits. Others it normalises through a URL and
// refuses with its own 400 when that changes the name (`127.1`); here such a Host counts as
// plain only when the URL leaves it as it is (a port from 60000, which the adapter's pattern misses).
const ADAPTER_PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/
const NAME_AND_PORT = /^[a-z0-9._-]+(?::[1-9]\d{0,4})?$/

function plainHost(host: string): boolean {
  if (ADAPTER_PLAIN_HOST.test(host)) return true
  if (!NAME_AND_PORT.test(host)) return false
  try {
    return new URL(`http://${host}/`).host === host
  } catch {
    return false
  }
}

// Headers as hono's adapter reads them: by lower-case name, repeated ones joined (cookies by `; `).
function headerMap(raw: string[]): Map<string, string> {
  const map = new Map<string, string>()
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase()
    const value = raw[i + 1]!
    const had = map.get(name)
    map.set(name, had === undefined ? value : `${had}${name === 'cookie' ? '; ' : ', '}${value}`)
  }
  return map
}

// The same lookup, reusing the headers object Node already built for its own Host check when no
// name is repeated: then each of its values is the one raw value (set-cookie as a one-item list),
// exactly what headerMap would hold. Node drops or joins repeats by its own rules, so a request
// with any repeated name gets headerMap.
function headerLookup(req: IncomingMessage): (name: string) => string | undefined {
  const parsed = req.headers
  if (Object.keys(parsed).length * 2 === req.rawHeaders.length) {
    return (name) => {
      const v: unknown = parsed[name]
      // (Array: set-cookie. Anything else: a name on Object.prototype, not a header.)
      return typeof v === 'string' ? v : Array.isArray(v) ? v.join(', ') : undefined
    }
  }
  const map = headerMap(req.rawHeaders)
  return (name) => map.get(name)
}

// The client disconnected before its answer was written (what @hono/node-server's abort signal says).
const hangupOf =
  (res: ServerResponse): OnHangup =>
  (stop) => {
    if (res.writableFinished) return
    if (res.destroyed) stop()
    else res.once('close', () => res.writableFinished || stop())
  }

// The body's text. Node's parser hands a small body over in the same read as the headers, and by
// the next tick it sits in the request's buffer: taken from there with one read(), without
// flowing mode (its resume and end ticks, four listeners), which was ~10 µs of a block's path.
// A body still arriving is read as a stream.
function readText(req: IncomingMessage, declared: number): Promise<string> {
  return new Promise((resolve, reject) => {
    process.nextTick(() => {
      try {
        const whole = req.complete || (declared > 0 && req.readableLength === declared)
        if (!whole) return void streamText(req).then(resolve, reject)
        const buf: Buffer | null = req.read()
        // Not ended yet (the parser reports the end in its next callback): flowing, so the end is
        // still consumed and Node's server sees a read request as it does after 'data'/'end'.
        if (!req.complete) req.resume()
        resolve(buf === null ? '' : DECODER.decode(buf))
      } catch (err) {
        // Answered by the route's error reply, never thrown out of a tick (that would end the process).
        reject(err)
      }
    })
  })
}

const HUNG_UP = 'The client closed the request before its body ended.'

function streamText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    // Looked at a tick after the request came: a client already gone sends no 'close' again.
    if (req.destroyed && !req.complete) return reject(new Error(HUNG_UP))
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.once('end', () => resolve(DECODER.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks))))
    req.once('error', reject)
    // The client went away mid-body: nothing to answer, but the request must not wait forever.
    req.once('close', () => req.complete || reject(new Error(HUNG_UP)))
  })
}

// As the WHATWG Request.text() hono reads: UTF-8, a leading BOM dropped, bad bytes replaced.
const DECODER = new TextDecoder()

export function fastRoutes(engine: Engine, options: FastRoutesOptions): FastRoutes {
  const guard = requestGuards(options)

  // Everything after the match, in one async function: whatever throws, synchronously or not,
  // is answered through errorReply as hono's onError would, never left to crash the listener.
  async function serve(req: IncomingMessage, res: ServerResponse, request: GuardRequest, ids: string[]) {
    let cors: Record<string, string> | undefined
    try {
      const verdict = guard(request)
      cors = verdict.cors
      const refusal =
        verdict.refusal ?? declaredBodyRefusal(request.header('content-length'), options.maxBodyBytes)
      if (refusal) {
        sendRefusal(res, refusal, cors)
        return
      }
      const [sessionId, blockId] = ids as [string, string | undefined]
      if (blockId !== undefined) {
        sendJson(res, 200, getBlockRoute(engine, sessionId, blockId), cors)
        return
      }
      const reply = await runBlockRoute(engine, sessionId, {
        idempotencyKey: request.header('idempotency-key'),
        prefer: request.header('prefer'),
        text: () => readText(req, Number(request.header('content-length') ?? 0)),
        onHangup: hangupOf(res),
      })
      sendJson(res, reply.status, reply.body, cors, reply.headers)
    } catch (err) {
      const { status, body } = errorReply(duringShutdown(err, engine))
      sendJson(res, status, body, cors)
    }
  }

  const routes: FastRoutes = {
    served: 0,
    handle(req, res) {
      const url = req.url
      if (url === undefined || url.includes('?')) return false
      const m = BLOCKS.exec(url)
      if (!m) return false
      if (req.method !== (m[2] === undefined ? 'POST' : 'GET')) return false
      if (req.headers['transfer-encoding'] !== undefined) return false
      // A Host the adapter would have to normalise (or refuse with its own 400) goes to hono.
      const host = req.headers.host
      if (host === undefined || !plainHost(host)) return false
      routes.served++
      const request: GuardRequest = {
        method: req.method,
        path: url,
        url: `http://${host}${url}`,
        header: headerLookup(req),
        query: () => undefined,
      }
      // A body left unread by an error answer (a refusal) closes the connection once the answer
      // is written (src/http/request-bodies.ts): nobody waits for a slow client's body.
      void serve(req, res, request, [m[1]!, m[2]!])
      return true
    },
  }
  return routes
}
