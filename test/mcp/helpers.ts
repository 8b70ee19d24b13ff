import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { startServer, type VisServer } from '../../src/http/server.js'

export const python = process.env.VIS_PYTHON_VERSION
export const repoRoot = new URL('../..', import.meta.url).pathname
export const cliScript = join(repoRoot, 'test', 'distribution', 'run-cli.ts')
export const stdioFixture = join(repoRoot, 'test', 'mcp', 'fixtures', 'stdio-server.ts')

export const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), `vis-mcp-${prefix}-`))

// Environment for a child process: no inherited VIS_* settings but the Python minor.
export function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && (!k.startsWith('VIS_') || k === 'VIS_PYTHON_VERSION')) env[k] = v
  }
  return { ...env, ...extra }
}

export const textOf = (r: CallToolResult): string =>
  r.content
    .filter((c) => c.type === 'text')
    .map((c) => (c as { text: string }).text)
    .join('\n')

export async function run(
  client: Client,
  code: string,
  extra: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return (await client.callTool({ name: 'python_execution', arguments: { code, ...extra } }, undefined, {
    timeout: 120_000,
  })) as CallToolResult
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}

export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

// The handshake's first request, as a client named `clientName` sends it.
export function initializeRequest(clientName: string) {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: clientName, version: '1' },
    },
  }
}

// `vis mcp` on `root` as a child whose stdin the test writes and ends, its output collected.
export function spawnMcp(root: string, home: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', cliScript, 'mcp', '--root', root, '--pool', '0'],
    {
      cwd: repoRoot,
      env: childEnv({ VIS_HOME: home }),
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  )
  const out = { stdout: '', stderr: '' }
  child.stdout.on('data', (d) => {
    out.stdout += d
  })
  child.stderr.on('data', (d) => {
    out.stderr += d
  })
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  return { child, out, exited }
}

// A real server on loopback with its /mcp route (a bearer token; MCP sessions on `root`, network
// off) and an SDK client connected to it over Streamable HTTP. VIS_HOME names the server's home
// while it runs; close() ends both and puts VIS_HOME back.
export async function mcpOverHttp(
  prefix: string,
  token: string,
): Promise<{ server: VisServer; client: Client; root: string; close: () => Promise<void> }> {
  const home = tempDir(`${prefix}-home`)
  const root = tempDir(`${prefix}-root`)
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  let server: VisServer | undefined
  let client: Client | undefined
  const close = async () => {
    await client?.close()
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
  }
  try {
    server = await startServer({
      home,
      python,
      port: 0,
      pool: { size: 0 },
      extensions: false,
      token,
      mcp: { roots: [root], network: { enabled: false, allow: [], deny: [] } },
    })
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    })
    client = new Client({ name: prefix, version: '1.0.0' })
    await client.connect(transport, { timeout: 60_000 })
    return { server, client, root, close }
  } catch (err) {
    await close()
    throw err
  }
}
