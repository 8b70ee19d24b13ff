import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js'
import type { Engine } from '../../engine/engine.js'
import type { McpServePolicy } from '../../engine/mcp-config.js'
import { createVisMcpServer } from './server.js'
import { type RequestRouter, StdioLines } from './stdio-lines.js'

// Serves one MCP client on this process's stdin/stdout until the client closes stdin (or a
// signal arrives); then its sessions are closed. Nothing else may write to stdout meanwhile:
// it carries the protocol.
export async function serveStdio(engine: Engine, policy: McpServePolicy): Promise<string> {
  const { server, close } = createVisMcpServer(engine, policy, 'stdio')
  const transport = new StdioLines()
  const inflight = countRequests(transport)
  const ended = new Promise<string>((resolve) => {
    const done = (why: string) => {
      process.stdin.off('end', onEnd)
      process.off('SIGINT', onInt)
      process.off('SIGTERM', onTerm)
      resolve(why)
    }
    // Requests read before stdin ended are still answered: a client may write its requests and
    // close stdin at once (`printf ... | vis mcp`). A signal does not wait.
    const onEnd = () => inflight.drained().then(() => done('the client closed stdin'))
    const onInt = () => done('SIGINT')
    const onTerm = () => done('SIGTERM')
    process.stdin.once('end', onEnd)
    process.once('SIGINT', onInt)
    process.once('SIGTERM', onTerm)
    const prev = transport.onclose
    transport.onclose = () => {
      prev?.()
      done('the transport closed')
    }
  })
  await server.connect(transport)
  inflight.watch(requestRouter(server))
  const why = await ended
  await close()
  return why
}

const isRequest = (m: JSONRPCMessage) => 'method' in m && 'id' in m
const isResponse = (m: JSONRPCMessage) => !('method' in m) && 'id' in m

// The SDK's request router (what its Protocol calls once a message has passed its checks), or
// undefined if this SDK version has none by that name: requests then take the SDK's own path.
export function requestRouter(server: Server): RequestRouter | undefined {
  const route = (server as unknown as { _onrequest?: (r: JSONRPCRequest, extra?: unknown) => void })
    ._onrequest
  return typeof route === 'function' ? (r) => route.call(server, r, undefined) : undefined
}

// The client's requests not answered yet: each received request (id and method) until the
// response with its id has been written.
function countRequests(transport: StdioLines) {
  const open = new Set<string | number>()
  let wake: (() => void) | undefined
  return {
    // After server.connect, which installs the transport's onmessage.
    watch(route: RequestRouter | undefined) {
      const receive = transport.onmessage
      transport.onmessage = (message: JSONRPCMessage) => {
        if (isRequest(message)) open.add((message as { id: string | number }).id)
        receive?.(message)
      }
      if (route)
        transport.routeRequests((request) => {
          open.add(request.id)
          route(request)
        })
      const send = transport.send.bind(transport)
      transport.send = async (message: JSONRPCMessage) => {
        await send(message)
        if (isResponse(message) && open.delete((message as { id: string | number }).id) && open.size === 0)
          wake?.()
      }
    },
    drained(): Promise<void> {
      if (open.size === 0) return Promise.resolve()
      return new Promise((resolve) => {
        wake = resolve
      })
    },
  }
}
