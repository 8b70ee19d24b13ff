// The set-up the MCP launch tests share (launch.test.ts, launch-renamed-root.test.ts,
// test/attacks/mcp-path-renamed-live-root.test.ts): an engine whose only configuration is its stdio
// servers, blocks run in its sessions, and a server started by the host directly (no block) to read the
// code of its refusal. Kept out of helpers.ts, which tests that never load the engine import too.
import { createEngine, type Engine, type EngineOptions } from '../../src/engine/index.js'
import { StdioServerSchema } from '../../src/mcp-client/config.js'
import { ServerConnection } from '../../src/mcp-client/connection.js'
import { python } from './helpers.js'

export const mcpEngine = (home: string, mcpServers: EngineOptions['mcpServers']): Promise<Engine> =>
  createEngine({ home, python, pool: { size: 0 }, extensions: false, mcpServers })

// One block in session `id`, with the time an MCP server's start may take.
export async function blockIn(engine: Engine, id: string, code: string) {
  return (await engine.runBlock(id, { code, timeout_ms: 120_000 })).block
}

// The code the host raises starting server `name` (configured as `config`) outside any block: a block
// sees every host tool failure as block.host, with the message only. Undefined when it connects.
export async function launchRefusal(
  name: string,
  config: unknown,
  tag: string,
  home: string,
): Promise<string | undefined> {
  const conn = new ServerConnection(name, StdioServerSchema.parse(config), tag, undefined, home)
  try {
    await conn.connect()
    return undefined
  } catch (err) {
    return (err as { code?: string }).code
  } finally {
    await conn.close()
  }
}
