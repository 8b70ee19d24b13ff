import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { ErrorCode } from '../util/errors.js'
import { errorAnswer } from './errors.js'

// An error answer written straight to a socket, for the moments no ServerResponse may answer:
// a connection refused before its request is read, a request whose route still waits for the
// body it will never get. The connection closes after it.
export function rawErrorReply(
  code: ErrorCode,
  message: string,
  details: Record<string, unknown>,
  headers: Record<string, string> = {},
): string {
  const { status, json } = errorAnswer(code, message, details)
  const reason = STATUS_CODES[status] ?? 'Error'
  const body = JSON.stringify(json)
  const head = {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    ...headers,
  }
  const lines = Object.entries(head).map(([name, value]) => `${name}: ${value}\r\n`)
  return `HTTP/1.1 ${status} ${reason}\r\n${lines.join('')}\r\n${body}`
}

// Writes the answer and ends the connection: the answer goes out with our FIN, while what the
// client still sends is read and dropped (closing on unread bytes would reset the connection,
// and the client might lose the answer). A client that does not close its side within a second
// is cut off. With `stopReading`, nothing more the client sends reaches the HTTP parser: a
// request that timed out cannot complete afterwards and run its route after all. The socket
// closes as soon as the answer is out.
export function answerAndClose(socket: Socket, reply: string, opts: { stopReading?: boolean } = {}): void {
  if (socket.destroyed) return
  if (opts.stopReading) {
    socket.pause()
    socket.end(reply, () => socket.destroy())
    return
  }
  if (!socket.writableEnded) socket.end(reply)
  const timer = setTimeout(() => socket.destroy(), 1000)
  timer.unref()
  socket.once('close', () => clearTimeout(timer))
}
