import { Agent, request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { Readable } from 'node:stream'

// Passing a request on to the node that owns its session, and its answer back, streamed (an SSE
// stream or a block's long wait included). node:http rather than fetch: no header or body
// timeouts of its own (a block may take as long as its timeout_ms), and we can tell a connection
// that never opened (safe to retry elsewhere) from one that broke after the request went out.

export const FORWARDED_BY = 'x-vis-forwarded-by'
export const OWNER_HEADER = 'x-vis-owner'

// Headers that describe one hop, not the request (RFC 9110 section 7.6.1). Host is kept, as
// nginx keeps it: the owner's browser guards judge the request by the name the client used (a
// page's same-origin request stays same-origin), and every node answers to the same names.
const HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']

// The owner could not be reached at all: nothing was delivered, the caller may wait for the
// lease to expire and take the session over.
export class OwnerUnreachable extends Error {}

// The owner took the request and then went away: it may have acted on it, so only the client
// may retry (with its Idempotency-Key).
export class OwnerFailed extends Error {}

const agent = new Agent({ keepAlive: true, maxSockets: 256 })

export type ForwardOptions = {
  // This node, for X-Vis-Forwarded-By (the owner never forwards such a request again).
  nodeId: string
  // The owner, for X-Vis-Owner on the answer.
  ownerId: string
  ownerUrl: string
  // The request body, read whole (vis bodies are at most 1 MiB) so a refused connection can be
  // retried after a takeover.
  body?: Buffer
  // Aborts the upstream request (the owner lost its lease while we waited).
  signal?: AbortSignal
}

const RETRYABLE_CONNECT = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND'])

export function forward(req: Request, opts: ForwardOptions): Promise<Response> {
  const incoming = new URL(req.url)
  const target = new URL(incoming.pathname + incoming.search, opts.ownerUrl)
  const headers: Record<string, string> = {}
  req.headers.forEach((value, name) => {
    if (!HOP.includes(name)) headers[name] = value
  })
  headers[FORWARDED_BY] = opts.nodeId
  if (opts.body !== undefined) headers['content-length'] = String(opts.body.length)
  else delete headers['content-length']
  const idempotent = ['GET', 'HEAD', 'OPTIONS'].includes(req.method)
  return new Promise<Response>((resolve, reject) => {
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest
    let connected = false
    const upstream = send(
      target,
      {
        method: req.method,
        headers,
        // A POST goes on a new connection: on a pooled one the owner may have died (or closed it
        // idle) just before, and a reset there would look as if the request had reached it.
        // On a new one, "refused" proves it did not, and a takeover may serve it.
        agent: target.protocol === 'https:' ? undefined : idempotent ? agent : false,
        signal: opts.signal,
        // TLS to the owner checks the owner's certificate, not the client's Host name.
        ...(target.protocol === 'https:' ? { servername: target.hostname } : {}),
      },
      (res: IncomingMessage) => {
        const out = new Headers()
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined || HOP.includes(name) || name === 'content-length') continue
          for (const v of Array.isArray(value) ? value : [value]) out.append(name, v)
        }
        out.set(OWNER_HEADER, opts.ownerId)
        // The client went away: stop reading from the owner (an SSE stream ends there too).
        req.signal.addEventListener('abort', () => res.destroy(), { once: true })
        const body =
          req.method === 'HEAD' || res.statusCode === 204 || res.statusCode === 304
            ? null
            : (Readable.toWeb(res) as ReadableStream<Uint8Array>)
        resolve(new Response(body, { status: res.statusCode ?? 502, headers: out }))
      },
    )
    upstream.on('socket', (s) => {
      if (!s.connecting) connected = true
      else s.once('connect', () => (connected = true))
    })
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      // Given up on (the owner lost its lease while we waited): a GET may be asked again; a POST
      // may have reached the owner before it stalled, so it is the client's to retry.
      const neverSent = !opts.signal?.aborted && (!connected || RETRYABLE_CONNECT.has(err.code ?? ''))
      if (neverSent || idempotent) reject(new OwnerUnreachable(err.message))
      else reject(new OwnerFailed(err.message))
    })
    upstream.end(opts.body)
  })
}
