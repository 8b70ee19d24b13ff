import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { answerAndClose, rawErrorReply } from './raw-reply.js'

// A request body must arrive within a bounded time. Node's requestTimeout would bound the whole
// request, the answer's wait included, and a block may wait as long as its own timeout: that
// stays off (server.ts), and this bounds only the body, from the end of the headers to its last
// byte. A client that never finishes its body (slowloris) no longer holds its connection.

export const DEFAULT_BODY_TIMEOUT_MS = 30_000

const declaresBody = (req: IncomingMessage) => {
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

export function guardRequestBodies(server: Server, bodyTimeoutMs: number): void {
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    // Node's parser reads a body in the same pass as its headers, right after this event: a
    // small body is whole by the time anyone answers.
    if (!declaresBody(req) || req.complete) return
    closeAfterUnreadRefusal(req, res)
    const timer = setTimeout(() => bodyTimedOut(req, res, bodyTimeoutMs), bodyTimeoutMs)
    timer.unref()
    // A body still arriving after the answer (Node drains it) keeps its timer.
    res.once('close', () => {
      if (req.complete) clearTimeout(timer)
    })
    req.once('end', () => clearTimeout(timer))
  })
}

// An error answered before the body arrived (a 401, a 413, a refused Origin): Node would keep
// the connection to drain a body nobody reads, for as long as the client dawdles. The answer
// says `Connection: close` instead, and Node closes once it is written.
function closeAfterUnreadRefusal(req: IncomingMessage, res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse
  ;(res as { writeHead: unknown }).writeHead = (status: number, ...rest: unknown[]) => {
    if (status >= 400 && !req.complete && !res.headersSent) res.setHeader('Connection', 'close')
    return writeHead(status, ...rest)
  }
}

function bodyTimedOut(req: IncomingMessage, res: ServerResponse, ms: number): void {
  if (req.complete || req.socket.destroyed) return
  // Answered already (and now draining): only the close is left to do.
  const reply = res.headersSent
    ? ''
    : rawErrorReply(
        'http.body-timeout',
        `The request body did not arrive within ${ms} ms of its headers; send it whole, or at once.`,
        { timeoutMs: ms },
      )
  answerAndClose(req.socket, reply, { stopReading: true })
}
