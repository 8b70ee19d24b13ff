// `vis mcp` over stdio, driven by the official SDK's client: the CLI is a real child process.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  childEnv,
  cliScript,
  initializeRequest,
  repoRoot,
  run,
  spawnMcp,
  stdioFixture,
  tempDir,
  textOf,
} from './helpers.js'
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

  // Over stdio the cancellation follows its request on the same pipe, so it reliably arrives
  // while the new session is still being made: before the block could be handed over.
  test('a request cancelled right after it was sent never runs its code', async () => {
    const c = await connect()
    for (let i = 0; i < 3; i++) {
      const marker = join(root, `never-${Date.now()}-${i}.txt`)
      const ac = new AbortController()
      const call = c.callTool(
        {
          name: 'python_execution',
          arguments: { code: `open(${JSON.stringify(marker)}, "w").write("ran")`, session: `early${i}` },
        },
        undefined,
        { timeout: 120_000, signal: ac.signal },
      )
      await new Promise((r) => setImmediate(r))
      ac.abort('changed my mind')
      await assert.rejects(call)
      // The label's session works, and the cancelled block left nothing behind.
      assert.equal(textOf(await run(c, '6 * 7', { session: `early${i}` })), '→ 42')
      assert.equal(existsSync(marker), false, `the cancelled block ${i} ran`)
    }
  })

  test('the process stops with status 0 when the client closes stdin', async () => {
    const { child, out, exited } = spawnMcp(root, tempDir('stdio-eof'))
    child.stdin.end()
    assert.equal(await exited, 0, out.stderr)
    assert.match(out.stderr, /vis mcp: the client closed stdin, stopping/)
  })

  test('requests written before stdin closes are answered, then it stops with status 0', async () => {
    const { child, out, exited } = spawnMcp(root, tempDir('stdio-piped'))
    // As `printf '...' | vis mcp` does: every request, then EOF at once.
    const messages = [
      initializeRequest('pipe'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'python_execution', arguments: { code: 'print(6 * 7)' } },
      },
    ]
    child.stdin.end(messages.map((m) => `${JSON.stringify(m)}\n`).join(''))
    assert.equal(await exited, 0, out.stderr)
    const replies = out.stdout
      .split('\n')
      .filter(Boolean)
      .map(
        (l) => JSON.parse(l) as { id?: number; result?: { content: { text: string }[]; isError: boolean } },
      )
    const call = replies.find((r) => r.id === 2)
    assert.ok(call, `the tools/call was answered before the exit: ${out.stdout}`)
    assert.equal(call.result?.isError, false, JSON.stringify(call))
    assert.equal(call.result?.content[0]?.text, '42')
    assert.match(out.stderr, /vis mcp: the client closed stdin, stopping/)
  })

  test('--allow without --network is refused with a reason', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', cliScript, 'mcp', '--allow', 'example.com'], {
      cwd: repoRoot,
      env: childEnv({ VIS_HOME: tempDir('stdio-bad') }),
      encoding: 'utf8',
    })
    assert.equal(r.status, 2, 'a usage error')
    assert.match(r.stderr, /--allow narrows the network: give --network with it \[cli\.bad-option\]/)
  })

  test('a --root that is not a directory is refused with its path, before anything starts', () => {
    const missing = join(root, 'no-such-dir')
    const file = join(root, 'a-file.txt')
    writeFileSync(file, 'not a directory\n')
    for (const bad of [missing, file]) {
      const r = spawnSync(
        process.execPath,
        ['--import', 'tsx', cliScript, 'mcp', '--root', root, '--root', bad],
        {
          cwd: repoRoot,
          env: childEnv({ VIS_HOME: tempDir('stdio-badroot') }),
          encoding: 'utf8',
        },
      )
      assert.equal(r.status, 2, r.stderr)
      assert.match(r.stderr, new RegExp(`--root ${bad}: no such directory \\[cli\\.bad-option\\]`))
    }
  })

  test("without --root, the home's mcp.json gives the policy and the servers sessions use, both ways at once", async () => {
    const home = tempDir('stdio-config-home')
    const configured = tempDir('stdio-config-root')
    writeFileSync(
      join(home, 'mcp.json'),
      JSON.stringify({
        serve: { roots: [configured] },
        servers: {
          fx: { command: process.execPath, args: ['--import', 'tsx', stdioFixture, 'fx'], cwd: repoRoot },
        },
      }),
    )
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', cliScript, 'mcp', '--pool', '0'],
      env: childEnv({ VIS_HOME: home }),
      cwd: repoRoot,
      stderr: 'pipe',
    })
    const c = new Client({ name: 'vis-test', version: '1.0.0' })
    await c.connect(transport, { timeout: 60_000 })
    clients.push(c)
    const py = (await c.listTools()).tools.find((t) => t.name === 'python_execution')!
    assert.match(py.description ?? '', new RegExp(`Roots: ${configured}\\.`))
    // An MCP client of vis runs a block that calls another MCP server's tool through vis.
    const r = await run(c, 'mcp_fx_echo("via config", times=2)')
    assert.equal(textOf(r), '→ fx:via configvia config')
  })

  test('an invalid mcp.json stops vis mcp with the file and the field', () => {
    const home = tempDir('stdio-badconfig')
    writeFileSync(join(home, 'mcp.json'), JSON.stringify({ servers: { 'bad name': { command: 'x' } } }))
    const r = spawnSync(process.execPath, ['--import', 'tsx', cliScript, 'mcp'], {
      cwd: repoRoot,
      env: childEnv({ VIS_HOME: home }),
      encoding: 'utf8',
    })
    assert.equal(r.status, 1)
    assert.match(
      r.stderr,
      new RegExp(`${join(home, 'mcp.json')}: servers\\.bad name: a server name is a letter`),
    )
    assert.match(r.stderr, /\[mcp\.config\]/)
  })
})
