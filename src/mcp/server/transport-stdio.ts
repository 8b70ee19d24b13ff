import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { Engine } from '../../engine/engine.js'
import type { McpServePolicy } from '../config.js'
import { createVisMcpServer } from './server.js'

// Serves one MCP client on this process's stdin/stdout until the client closes stdin (or a
// signal arrives); then its sessions are closed. Nothing else may write to stdout meanwhile:
// it carries the protocol.
export async function serveStdio(engine: Engine, policy: McpServePolicy): Promise<string> {
  const { server, close } = createVisMcpServer(engine, policy, 'stdio')
  const transport = new StdioServerTransport()
  const ended = new Promise<string>((resolve) => {
    const done = (why: string) => {
      process.stdin.off('end', onEnd)
      process.off('SIGINT', onInt)
      process.off('SIGTERM', onTerm)
      resolve(why)
    }
    const onEnd = () => done('the client closed stdin')
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
  const why = await ended
  await close()
  return why
}
