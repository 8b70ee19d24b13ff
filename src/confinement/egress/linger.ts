// Types only: the worker's forwarder imports this module, and node:http must not load there.
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

// How long a side that has given its answer keeps reading what its peer still sends.
export const LINGER_MS = 5000

const lingering = new WeakSet<Socket>()

// What node's server answers to the client errors it names (the rest of HPE_*: 400).
const CLIENT_ERROR_STATUS: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
}
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
}

// True once lingeringClose has taken the socket: what arrives now is drained, never answered.
export const isLingering = (socket: Socket): boolean => lingering.has(socket)

// Closes a connection the way a server must when its client may still be sending (a request
// body it answered without reading, the rest of an upload): the answer already written is
// flushed and followed by a FIN, and what the client still sends is read and dropped until
// the client closes its half, or the bound. Closing at once would leave that input unread:
// on a unix socket the client then reads ECONNRESET, and its next write fails with EPIPE,
// which makes node destroy the client's socket before it has read the answer waiting in its
// receive queue. That is how the egress forwarder lost the proxy's 403 under load.
export function lingeringClose(socket: Socket, ms = LINGER_MS): void {
  if (socket.destroyed || lingering.has(socket)) return
  lingering.add(socket)
  const bound = setTimeout(() => socket.destroy(), ms)
  bound.unref()
  socket.once('close', () => clearTimeout(bound))
  // An error while draining needs no answer: the peer is gone.
  socket.on('error', () => socket.destroy())
  // Once both halves are done (our FIN flushed, theirs read), the socket destroys itself.
  socket.end()
  socket.resume()
}

// Makes an HTTP server end its connections with lingeringClose. node's server ends a connection
// after a response with socket.destroySoon(): the FIN, and the close as soon as the FIN is out,
// whether or not the client is still sending. Replaced per socket, so nothing else changes.
export function lingerAfterAnswers(server: HttpServer, ms = LINGER_MS): void {
  // Connections with a response under way: unparsable input then gets no 400 in its middle.
  const answering = new WeakSet<Socket>()
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    answering.add(socket)
    res.once('close', () => answering.delete(socket))
  })
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = () => lingeringClose(socket, ms)
  })
  // With a listener here node no longer handles a client error itself. This answers as node
  // does (400 for unparsable input, 431 for oversized headers, 408 for a request too slow to
  // arrive, unless a response is under way) but lingers instead of destroying; input after the
  // answer (parsed as junk) is drained, not answered; a connection error just closes.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (isLingering(socket)) return
    const status = CLIENT_ERROR_STATUS[err.code ?? ''] ?? (err.code?.startsWith('HPE_') ? 400 : undefined)
    if (status === undefined) {
      socket.destroy()
      return
    }
    if (socket.writable && !answering.has(socket)) {
      const body = `vis egress: ${STATUS_TEXT[status]} (${err.code})\n`
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nconnection: close\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      )
    }
    lingeringClose(socket, ms)
  })
}
