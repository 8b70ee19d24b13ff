import type { Socket } from 'node:net'

// How long a relay waits, once one side's peer has sent its FIN, for the other direction to
// end too. A guest that keeps a dead pooled connection open must not pin the relay.
export const RELAY_LINGER_MS = 5000
// How long the far side may stay silent once the guest has sent its FIN (it half-closed after
// its request: `nc -N`, HTTP/1.0-style clients, shutdown(SHUT_WR)). The far side is working on
// the answer then, often for longer than RELAY_LINGER_MS: cutting at that bound lost every reply
// slower than 5 s, silently. Each byte it sends restarts this bound; only silence ends it.
export const RELAY_REPLY_IDLE_MS = 120_000

export type Relay = { cut(): void }

// Relays two connected sockets in both directions, with TCP's half-close passed through: a
// FIN from one side's peer ends that direction only. The pipe flushes what it relayed and then
// sends our FIN to the other peer; the other direction goes on. A peer that sends its request
// and then shuts down its write side (shutdown(SHUT_WR), `nc -N`, HTTP/1.0-style clients) still
// reads the whole reply, and the relay never closes a socket whose input is still arriving
// (that would make the close a reset and discard the data in flight). Once both directions
// are over the sockets close themselves. A peer that never closes its half is cut after
// `lingerMs` from the first FIN: a guest that keeps a dead pooled connection open cannot pin
// the relay.
// An error or an abortive close on a side whose peer had not finished takes the other side
// with it at once, and so does cut() (the network turned off). A side that fails after its
// peer's FIN (a write to a peer that has gone) does not: what is still queued towards the
// other side is flushed, and what the other peer still sends is drained.
// Both sockets should be created with allowHalfOpen, so the relay alone decides when to end.
// What the relay cannot save: a write to a side whose peer has closed fails with EPIPE, and
// node destroys that socket then and there, with what the peer sent before closing still
// unread in the kernel. So the proxy never closes on a client still sending (linger.ts).
// `a` is the guest's side (the forwarder's inbound connection, the proxy's client), `b` the far
// side: a FIN from `b`'s peer gives `a`'s direction `lingerMs`; a FIN from the guest gives the
// far side `replyIdleMs` of silence (restarted by each chunk it sends) to answer.
export function relaySockets(
  a: Socket,
  b: Socket,
  options: {
    lingerMs?: number
    replyIdleMs?: number
    onError?: (side: Socket, err: NodeJS.ErrnoException) => void
  } = {},
): Relay {
  const lingerMs = options.lingerMs ?? RELAY_LINGER_MS
  const replyIdleMs = options.replyIdleMs ?? RELAY_REPLY_IDLE_MS
  let linger: NodeJS.Timeout | undefined
  const cut = () => {
    if (linger) clearTimeout(linger)
    a.destroy()
    b.destroy()
  }
  // The first FIN starts the bound on how long the other direction may still take.
  const bound = (ended: Socket) => {
    if (linger) return
    if (ended === b) {
      linger = setTimeout(cut, lingerMs)
      linger.unref()
      return
    }
    linger = setTimeout(cut, replyIdleMs)
    linger.unref()
    const alive = () => linger?.refresh()
    b.on('data', alive)
    b.once('end', () => {
      b.off('data', alive)
      if (linger) clearTimeout(linger)
      linger = setTimeout(cut, lingerMs)
      linger.unref()
    })
  }
  const onClose = (side: Socket, other: Socket) => () => {
    // Closed before its peer's clean FIN (a reset, an error, destroy()): both go.
    if (!side.readableEnded) {
      cut()
      return
    }
    // Closed after it (its 'end' already ended `other` through the pipe): nothing can be
    // written to it any more, so what `other`'s peer still sends is drained, not left unread.
    other.unpipe(side)
    other.resume()
    if (a.destroyed && b.destroyed && linger) clearTimeout(linger)
  }
  for (const [from, to] of [
    [a, b],
    [b, a],
  ] as const) {
    // Ends `to` (flushed, then our FIN) once `from`'s peer has sent its FIN.
    from.pipe(to)
    from.once('end', () => bound(from))
    // The 'close' that follows an error decides (onClose); the listener keeps it from throwing.
    from.on('error', (err: NodeJS.ErrnoException) => options.onError?.(from, err))
    from.once('close', onClose(from, to))
  }
  return { cut }
}
