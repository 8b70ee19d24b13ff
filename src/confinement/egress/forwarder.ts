import type { Server } from 'node:net'
import { VisError } from '../../util/errors.js'
import { EGRESS_PORT, EGRESS_SOCKET } from '../environment.js'
import { nodeNet } from './node-net.js'
import { type Relay, relaySockets } from './relay.js'

export type EgressForwarder = { port: number; close(): Promise<void> }

// Runs inside the sandbox (in the worker's node, before seccomp and before any guest
// code): a loopback TCP listener in the sandbox's own network namespace relaying each
// connection to the host proxy's unix socket. HTTP(S)_PROXY point at it.
export async function startEgressForwarder(
  options: { port?: number; socketPath?: string; lingerMs?: number } = {},
): Promise<EgressForwarder> {
  const port = options.port ?? EGRESS_PORT
  const socketPath = options.socketPath ?? EGRESS_SOCKET
  // Open relays, so closing the forwarder (network turned off) also cuts them.
  const live = new Set<Relay>()
  const { connect, createServer } = nodeNet()
  // Half-open on both sides: the relay decides when each side ends (after flushing).
  const server: Server = createServer({ allowHalfOpen: true }, (inbound) => {
    const outbound = connect({ path: socketPath, allowHalfOpen: true })
    // Small request/response exchanges (CONNECT, lookups) must not wait on Nagle.
    inbound.setNoDelay(true)
    const relay = relaySockets(inbound, outbound, { lingerMs: options.lingerMs })
    live.add(relay)
    let open = 2
    const gone = () => {
      if (--open === 0) live.delete(relay)
    }
    inbound.once('close', gone)
    outbound.once('close', gone)
  })
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

// For the worker: starts the forwarder when the sandbox was spawned with network on.
export async function startEgressForwarderFromEnv(env = process.env): Promise<EgressForwarder | undefined> {
  if (!env.VIS_EGRESS_SOCKET) return undefined
  return startEgressForwarder({
    socketPath: env.VIS_EGRESS_SOCKET,
    port: Number(env.VIS_EGRESS_PORT ?? EGRESS_PORT),
  })
}
