import type { Server, Socket } from 'node:net'
import { VisError } from '../../util/errors.js'
import { EGRESS_PORT, EGRESS_SOCKET } from '../environment.js'
import { lingeringClose } from './linger.js'
import { nodeNet } from './node-net.js'
import { type Relay, relaySockets } from './relay.js'

const errorCode = (err: NodeJS.ErrnoException) => err.code ?? err.message

export type EgressForwarder = { port: number; close(): Promise<void> }

// Runs inside the sandbox (in the worker's node, before seccomp and before any guest
// code): a loopback TCP listener in the sandbox's own network namespace relaying each
// connection to the host proxy's unix socket. HTTP(S)_PROXY point at it.
export async function startEgressForwarder(
  options: {
    port?: number
    socketPath?: string
    lingerMs?: number
    replyIdleMs?: number
    log?: (line: string) => void
  } = {},
): Promise<EgressForwarder> {
  const port = options.port ?? EGRESS_PORT
  const socketPath = options.socketPath ?? EGRESS_SOCKET
  // The worker's stderr is its log file: what goes wrong on the way to the host proxy shows there.
  const log = options.log ?? ((line: string) => process.stderr.write(`vis egress forwarder: ${line}\n`))
  // Open relays (and connections still dialling the proxy), so closing the forwarder (network
  // turned off) also cuts them.
  const live = new Set<Relay>()
  const { connect, createServer } = nodeNet()
  // Half-open on both sides: the relay decides when each side ends (after flushing).
  const server: Server = createServer({ allowHalfOpen: true }, (inbound) =>
    forward(inbound, {
      connect,
      socketPath,
      lingerMs: options.lingerMs,
      replyIdleMs: options.replyIdleMs,
      log,
      live,
    }),
  )
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(
        new VisError('confine.egress-forwarder', `cannot listen on 127.0.0.1:${port}: ${err.message}`, {}),
      ),
    )
    server.listen(port, '127.0.0.1', () => resolve())
  })
  const bound = server.address()
  return {
    port: typeof bound === 'object' && bound ? bound.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const r of live) r.cut()
      }),
  }
}

type Forwarding = {
  connect: typeof import('node:net').connect
  socketPath: string
  lingerMs?: number
  replyIdleMs?: number
  log: (line: string) => void
  live: Set<Relay>
}

// One guest connection: dial the host proxy, then relay; a dial that fails is answered.
function forward(
  inbound: Socket,
  { connect, socketPath, lingerMs, replyIdleMs, log, live }: Forwarding,
): void {
  // Small request/response exchanges (CONNECT, lookups) must not wait on Nagle.
  inbound.setNoDelay(true)
  inbound.on('error', () => {})
  const outbound = connect({ path: socketPath, allowHalfOpen: true })
  let reached = false
  const dialling: Relay = {
    cut: () => {
      inbound.destroy()
      outbound.destroy()
    },
  }
  live.add(dialling)
  outbound.once('close', () => live.delete(dialling))
  // The guest gave up before the proxy answered the dial.
  const guestGone = () => outbound.destroy()
  inbound.once('close', guestGone)
  // The relay starts once the proxy is reached; until then the guest's bytes wait in inbound.
  outbound.once('connect', () => {
    reached = true
    live.delete(dialling)
    inbound.off('close', guestGone)
    const relay = relaySockets(inbound, outbound, {
      lingerMs,
      replyIdleMs,
      onError: (side, err) => {
        if (side === outbound) log(`the connection to the host egress proxy failed: ${errorCode(err)}`)
      },
    })
    live.add(relay)
    let open = 2
    const gone = () => {
      if (--open === 0) live.delete(relay)
    }
    inbound.once('close', gone)
    outbound.once('close', gone)
  })
  // Everything a guest sends here is an HTTP proxy request (CONNECT, an absolute URI, a
  // lookup), so a proxy that cannot be reached is answered in HTTP, naming why.
  outbound.once('error', (err) => {
    if (reached) return // the relay's to handle
    const reason = `cannot reach the host egress proxy (${errorCode(err)})`
    log(`${reason} at ${socketPath}`)
    const body = `vis egress: ${reason}\n`
    if (!inbound.writable) return inbound.destroy()
    inbound.write(
      `HTTP/1.1 502 vis egress: ${reason}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    )
    lingeringClose(inbound, lingerMs)
  })
}

// For the worker: starts the forwarder when the sandbox was spawned with network on.
export async function startEgressForwarderFromEnv(env = process.env): Promise<EgressForwarder | undefined> {
  if (!env.VIS_EGRESS_SOCKET) return undefined
  return startEgressForwarder({
    socketPath: env.VIS_EGRESS_SOCKET,
    port: Number(env.VIS_EGRESS_PORT ?? EGRESS_PORT),
  })
}
