// MCP servers' tools inside a block: a stdio server and a Streamable HTTP server written with
// the official SDK (test/mcp/fixtures), called by name from real sessions of a real engine.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { bindMcpServers } from '../../src/mcp-client/bind.js'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { type FixtureHttp, startFixtureHttp } from './fixtures/http-server.js'
import { processGone, python, repoRoot, stdioFixture, tempDir, waitFor } from './helpers.js'

const home = tempDir('client-home')
const root = tempDir('client-root')
const TOKEN = 'fixture-token'
let engine: Engine
let web: FixtureHttp

const stdio = (label: string, extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: ['--import', 'tsx', stdioFixture, label],
  cwd: repoRoot,
  // tsx compiles the fixture at start: generous on a loaded machine.
  connect_timeout_ms: 60_000,
  ...extra,
})

before(async () => {
  web = await startFixtureHttp(TOKEN)
  engine = await createEngine({
    home,
    python,
    pool: { size: 0 },
    mcpServers: {
      fx: stdio('fx'),
      quick: stdio('quick', { timeout_ms: 1000 }),
      web: { url: web.url, token: TOKEN },
      broken: {
        command: process.execPath,
        args: ['-e', 'process.stderr.write("no config here\\n"); process.exit(2)'],
      },
    },
  })
})
after(async () => {
  await engine?.close()
  await web?.close()
})

async function session(): Promise<string> {
  return (await engine.createSession({ roots: [root] })).id
}
async function block(id: string, code: string, timeout_ms = 60_000) {
  return (await engine.runBlock(id, { code, timeout_ms })).block
}
const ok = (b: Awaited<ReturnType<typeof block>>) => {
  assert.equal(b.error, null, JSON.stringify(b.error))
  return b
}

const ppidOf = (pid: number) =>
  Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])

describe('MCP servers from a block', () => {
  test('each tool is bound as mcp_<server>_<tool> with a schema-derived signature and its description', async () => {
    const id = await session()
    const b = ok(
      await block(
        id,
        'import inspect\nfor t in (mcp_fx_add, mcp_fx_echo, mcp_web_echo):\n    print(t.__name__, inspect.signature(t))\nprint(mcp_fx_add.__doc__)',
      ),
    )
    assert.match(
      b.stdout,
      /^mcp_fx_add \(a, b\)\nmcp_fx_echo \(text, times=None\)\nmcp_web_echo \(text, times=None\)\n/,
    )
    assert.match(
      b.stdout,
      /Add two numbers\.\n\nParameters:\n {2}a \(number\): the first\n {2}b \(number\): the second/,
    )
    const servers = ok(await block(id, 'mcp_servers()')).result as any[]
    const byName = Object.fromEntries(servers.map((s) => [s.name, s]))
    assert.equal(byName.fx.state, 'connected')
    assert.equal(byName.fx.transport, 'stdio')
    assert.equal(byName.web.transport, 'http')
    assert.deepEqual(byName.fx.tools.sort(), [
      'mcp_fx_add',
      'mcp_fx_crash',
      'mcp_fx_echo',
      'mcp_fx_fail',
      'mcp_fx_grow',
      'mcp_fx_meet',
      'mcp_fx_pid',
      'mcp_fx_slow',
    ])
  })

  test('calls by name: positional, keyword, structured results; the server runs on the host, outside the jail', async () => {
    const id = await session()
    assert.equal(ok(await block(id, 'mcp_fx_add(2, 3)["sum"]')).result, 5)
    assert.equal(ok(await block(id, 'mcp_fx_add(a=1.5, b=2)["sum"]')).result, 3.5)
    assert.equal(ok(await block(id, 'mcp_web_echo("hi", times=2)')).result, 'http:hihi')
    assert.equal(ok(await block(id, 'r = await mcp_fx_echo("awaited")\nr')).result, 'fx:awaited')
    const pid = Number(ok(await block(id, 'mcp_fx_pid()')).result)
    assert.equal(ppidOf(pid), process.pid, 'the stdio server is a child of the host process')
    const bad = await block(id, 'mcp_fx_add(1)')
    assert.match(bad.error!.message, /mcp_fx_add\(a, b\) is missing 'b'/)
  })

  test('gather batches calls across servers and runs them at once', async () => {
    const id = await session()
    // Each meet answers only when its partner call is waiting too: run one by one, they would fail.
    const b = ok(
      await block(
        id,
        'rs = await gather(mcp_fx_meet("a", 2), mcp_web_meet("b", 2), mcp_fx_echo("x"), mcp_fx_meet("a", 2), mcp_web_meet("b", 2))\nprint(rs)',
      ),
    )
    assert.equal(b.stdout, "['met at a', 'met at b', 'fx:x', 'met at a', 'met at b']\n")
  })

  test("a tool's failure reaches the guest as an exception with the server's message", async () => {
    const id = await session()
    const caught = ok(
      await block(
        id,
        'try:\n    mcp_fx_fail("nope")\nexcept Exception as e:\n    print(type(e).__name__, "|", e)',
      ),
    )
    assert.equal(caught.stdout, 'ToolError | mcp_fx_fail: fx.fail: refused: nope\n')
    const raised = await block(id, 'mcp_web_fail("denied by policy")')
    assert.equal((raised.error as { phase?: string }).phase, 'host')
    assert.match(raised.error!.message, /tool mcp_web_fail failed: web\.fail: refused: denied by policy/)
  })

  test('a call past the timeout fails with a timeout error; the block does not hang', async () => {
    const id = await session()
    const b = ok(
      await block(
        id,
        'try:\n    mcp_quick_slow(20000)\nexcept Exception as e:\n    print(e)\nprint(mcp_quick_echo("after"))',
      ),
    )
    assert.match(b.stdout, /^mcp_quick_slow: MCP server quick, tool slow: no answer within 1000 ms/)
    assert.match(b.stdout, /quick:after\n$/)
  })

  test('a server that dies is started again on the next call', async () => {
    const id = await session()
    const first = Number(ok(await block(id, 'mcp_fx_pid()')).result)
    // Killed mid-call: the call fails with the reason and what the server last said.
    const crashed = await block(id, 'mcp_fx_crash()')
    assert.match(
      crashed.error!.message,
      /tool mcp_fx_crash failed: MCP server fx, tool crash: .*Connection closed/,
    )
    assert.match(crashed.error!.message, /fixture: crashing on request/)
    const second = Number(ok(await block(id, 'mcp_fx_pid()')).result)
    assert.notEqual(second, first)
    // Killed from outside while idle.
    process.kill(second, 'SIGKILL')
    await waitFor('the server to be gone', () => processGone(second))
    const third = Number(ok(await block(id, 'mcp_fx_pid()')).result)
    assert.notEqual(third, second)
    const fx = (ok(await block(id, 'mcp_servers()')).result as any[]).find((s) => s.name === 'fx')
    assert.equal(fx.starts, 3)
    assert.equal(fx.state, 'connected')
  })

  test('an HTTP server that restarts is reached again', async () => {
    const id = await session()
    assert.equal(ok(await block(id, 'mcp_web_echo("one")')).result, 'http:one')
    const port = web.port
    await web.close()
    const down = await block(id, 'mcp_web_echo("two")')
    assert.match(down.error!.message, /tool mcp_web_echo failed: MCP server web/)
    web = await startFixtureHttp(TOKEN, port)
    assert.equal(ok(await block(id, 'mcp_web_echo("three")')).result, 'http:three')
    // Restarted again between calls: the forgotten MCP session is replaced on the spot.
    await web.close()
    web = await startFixtureHttp(TOKEN, port)
    assert.equal(ok(await block(id, 'mcp_web_echo("four")')).result, 'http:four')
  })

  test('a server whose tool list changes gets its new tools bound', async () => {
    const id = await session()
    assert.equal(ok(await block(id, 'mcp_fx_grow()')).result, 'grown')
    await waitFor('the new tool to be listed', async () =>
      (
        (ok(await block(id, 'mcp_servers()')).result as any[]).find((s) => s.name === 'fx').tools as string[]
      ).includes('mcp_fx_extra'),
    )
    assert.equal(ok(await block(id, 'mcp_fx_extra()')).result, 'extra here')
  })

  test('a server that cannot start is reported, not fatal; connect and disconnect by name', async () => {
    const id = await session()
    const broken = (ok(await block(id, 'mcp_servers()')).result as any[]).find((s) => s.name === 'broken')
    assert.equal(broken.state, 'failed')
    assert.match(broken.error, /no config here/)
    const retry = await block(id, 'mcp_connect("broken")')
    assert.match(retry.error!.message, /MCP server broken could not be reached: .*no config here/s)
    const unknown = await block(id, 'mcp_connect("nosuch")')
    assert.match(unknown.error!.message, /no MCP server named "nosuch"; configured: fx, quick, web, broken/)
    const off = ok(await block(id, 'mcp_disconnect("web")')).result as any
    assert.equal(off.state, 'closed')
    const gone = await block(id, 'mcp_web_echo("x")')
    assert.match(gone.error!.message, /NameError: name 'mcp_web_echo' is not defined/)
    const on = ok(await block(id, 'mcp_connect("web")')).result as any
    assert.equal(on.state, 'connected')
    assert.equal(ok(await block(id, 'mcp_web_echo("back")')).result, 'http:back')
  })

  test('an HTTP server that refuses the token or cannot be reached says why: the status, the socket error', async () => {
    // A port nothing listens on: one a server had a moment ago.
    const gone = await startFixtureHttp(TOKEN)
    const deadUrl = gone.url
    await gone.close()
    const rt = await createRuntime({ python, pool: { size: 0 } })
    try {
      const s = await rt.createSession({ roots: [root] })
      await bindMcpServers(s, { wrongkey: { url: web.url, token: 'not-the-token' }, dead: { url: deadUrl } })
      const servers = (await s.runBlock('mcp_servers()')).result as any[]
      const byName = Object.fromEntries(servers.map((x) => [x.name, x]))
      assert.equal(byName.wrongkey.state, 'failed')
      assert.match(byName.wrongkey.error, /^HTTP 401: .*unauthorized/)
      assert.equal(byName.dead.state, 'failed')
      assert.match(byName.dead.error, /^fetch failed \(.*ECONNREFUSED/)
      const retry = await s.runBlock('mcp_connect("dead")')
      assert.match(
        retry.error?.message ?? '',
        /MCP server dead could not be reached: fetch failed \(.*ECONNREFUSED/,
      )
    } finally {
      await rt.close()
    }
  })

  test('closing the session stops its stdio servers', async () => {
    const id = await session()
    const pid = Number(ok(await block(id, 'mcp_fx_pid()')).result)
    await engine.closeSession(id)
    await waitFor('the server process to end', () => processGone(pid))
  })

  test('a library session takes servers of its own, closed with it', async () => {
    const rt = await createRuntime({ python, pool: { size: 0 } })
    try {
      const s = await rt.createSession({ roots: [root] })
      const clients = await bindMcpServers(s, { solo: stdio('solo') })
      assert.ok(clients)
      assert.equal((await s.runBlock('mcp_solo_echo("mine")')).result, 'solo:mine')
      const pid = Number((await s.runBlock('mcp_solo_pid()')).result)
      // Only its own servers: the engine's configuration is not the runtime's.
      assert.match(
        (await s.runBlock('mcp_fx_echo("x")')).error?.message ?? '',
        /NameError: name 'mcp_fx_echo'/,
      )
      // A name as other hosts' configurations write it: "-" becomes "_" in Python, either form connects.
      const dashed = await rt.createSession({ roots: [root] })
      await bindMcpServers(dashed, { 'fx-dash': { type: 'stdio', ...stdio('dash') } })
      assert.equal((await dashed.runBlock('mcp_fx_dash_echo("d")')).result, 'dash:d')
      assert.equal(((await dashed.runBlock('mcp_disconnect("fx_dash")')).result as any).name, 'fx-dash')
      assert.equal(((await dashed.runBlock('mcp_connect("fx-dash")')).result as any).state, 'connected')
      await dashed.dispose()
      await s.dispose()
      await waitFor('the server process to end', () => processGone(pid))
      assert.equal(await bindMcpServers(await rt.createSession({ roots: [root] }), {}), undefined)
    } finally {
      await rt.close()
    }
  })
})
