// `vis mcp` over stdio, driven by the official SDK's client: the CLI is a real child process.
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { after, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { childEnv, cliScript, repoRoot, tempDir } from './helpers.js'
import { clientOptions, withRoots } from './roots.js'
import { serverScenarios } from './scenarios.js'

const root = tempDir('stdio-root')
const clients: Client[] = []

// Each client starts its own `vis mcp` process (as an MCP host does), each with its own home.
async function connect(opts: { roots?: () => string[] } = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', cliScript, 'mcp', '--root', root, '--pool', '0'],
    env: childEnv({ VIS_HOME: tempDir('stdio-home') }),
    cwd: repoRoot,
    stderr: 'pipe',
  })
  const client = withRoots(new Client({ name: 'vis-test', version: '1.0.0' }, clientOptions(opts)), opts)
  await client.connect(transport, { timeout: 60_000 })
  clients.push(client)
  return client
}

after(async () => {
  await Promise.allSettled(clients.map((c) => c.close()))
})

describe('vis mcp over stdio', () => {
  serverScenarios(connect, root)

  test('the process stops with status 0 when the client closes stdin', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', cliScript, 'mcp', '--root', root, '--pool', '0'],
      {
        cwd: repoRoot,
        env: childEnv({ VIS_HOME: tempDir('stdio-eof') }),
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    )
    let stderr = ''
    child.stderr.on('data', (d) => {
      stderr += d
    })
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
    child.stdin.end()
    assert.equal(await exited, 0, stderr)
    assert.match(stderr, /vis mcp: the client closed stdin, stopping/)
  })

  test('--allow without --network is refused with a reason', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', cliScript, 'mcp', '--allow', 'example.com'], {
      cwd: repoRoot,
      env: childEnv({ VIS_HOME: tempDir('stdio-bad') }),
      encoding: 'utf8',
    })
    assert.equal(r.status, 1)
    assert.match(r.stderr, /--allow narrows the network: give --network with it \[cli\.bad-option\]/)
  })
})
