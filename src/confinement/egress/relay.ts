import type { Socket } from 'node:net'

// How long a relay waits, once one side has closed cleanly, for the other side's peer to
// close its half. A guest that keeps a dead pooled connection open must not pin the relay.
export const RELAY_LINGER_MS = 5000

export type Relay = { cut(): void }

// Relays two connected sockets in both directions. A clean close (FIN) from one side's
// peer ends the conversation without losing anything: what was already relayed towards
// the other side is flushed before its FIN (pipe's end()), and what that other peer still
// sends is read and dropped, because unread input turns close() into an RST that can
// discard the data still in flight. Destroying both at once on the first close would throw
// away the queued tail (a truncated body, a lost 403). An error or an abortive close on
// either side still cuts both at once, and so does cut() (the network turned off).
// Both sockets should be created with allowHalfOpen, so the relay alone decides when to end.
// What the relay cannot save: a write to a side whose peer has closed fails with EPIPE, and
// node destroys that socket then and there, with what the peer sent before closing still
// unread in the kernel. So the proxy never closes on a client still sending (linger.ts).
export function relaySockets(
  a: Socket,
  b: Socket,
  options: { lingerMs?: number; onError?: (side: Socket, err: NodeJS.ErrnoException) => void } = {},
): Relay {
  const lingerMs = options.lingerMs ?? RELAY_LINGER_MS
  let linger: NodeJS.Timeout | undefined
  const cut = () => {
    if (linger) clearTimeout(linger)
    a.destroy()
    b.destroy()
  }
  // `from`'s peer sent its FIN. from→to: the pipe ends `to` once what it relayed is queued,
  // and end() sends the FIN only after the queue is flushed. to→from: nobody is left to
  // read it, so it is drained into nothing until to's peer closes its half, or the bound.
  const finish = (from: Socket, to: Socket) => {
    to.unpipe(from)
    to.resume()
    from.end()
    if (!linger) {
      linger = setTimeout(cut, lingerMs)
      linger.unref()
    }
  }
  // A side that closes without its peer's clean FIN first (a reset, an error, destroy())
  // takes the other side with it; one that closes after its FIN leaves the other to flush.
  const onClose = (side: Socket) => () => {
    if (!side.readableEnded) cut()
    else if (a.destroyed && b.destroyed && linger) clearTimeout(linger)
  }
  for (const [from, to] of [
    [a, b],
    [b, a],
  ] as const) {
    from.pipe(to)
    from.once('end', () => finish(from, to))
    // The 'close' that follows an error does the cutting; the listener keeps it from throwing.
    from.on('error', (err: NodeJS.ErrnoException) => options.onError?.(from, err))
    from.once('close', onClose(from))
  }
  return { cut }
}
