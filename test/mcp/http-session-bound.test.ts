// /mcp keeps a bounded number of MCP sessions (src/mcp/server/transport-http.ts maxSessions): at the
// bound an initialize closes the least recently used idle session, one never used after its
// initialize first, and that session's next request is answered "No such MCP session"; with every
// session busy the initialize is refused (503, mcp.sessions-full) until one is idle again; a session
// that never sent anything after its initialize expires after the short unused idle time, while a
// client that completed its handshake keeps its session. Both directions in each test: the ordinary
// client keeps working.
// (test/attacks/mcp-initialize-sessions-unbounded.test.ts is the heap side on the default bound.)
import assert from 'node:assert/strict'
import { existsSync, writeFileSync } from 'node:fs'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createAdaptorServer } from '@hono/node-server'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { Hono } from 'hono'
import { startServer, type VisServer } from '../../src/http/server.js'
import { type McpHttpOptions, mountMcp } from '../../src/mcp/server/transport-http.js'
import { initializeRequest, python, run, tempDir, textOf, waitFor } from './helpers.js'

const home = tempDir('bound-home')
let server: VisServer

before(async () => {
  server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false })
})
after(async () => {
  await server.close()
})

const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

// /mcp alone on a Hono app of its own, with the bound and idle times the test names.
async function mounted(root: string, opts: Omit<McpHttpOptions, 'policy'>) {
  const app = new Hono()
  const mcp = mountMcp(app, server.engine, {
    policy: { roots: [root], network: { enabled: false, allow: [], deny: [] } },
    ...opts,
  })
  const http = createAdaptorServer({ fetch: app.fetch }) as Server
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()))
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`
  const clients: Client[] = []
  return {
    url,
    get sessions() {
      return mcp.sessions
    },
    // A client as the SDK makes one: initialize, then notifications/initialized.
    async connect(): Promise<Client> {
      const c = new Client({ name: 'bound', version: '1' })
      await c.connect(new StreamableHTTPClientTransport(new URL(url)))
      clients.push(c)
      return c
    },
    // An initialize and nothing after it; the answer's status and session id.
    async initialize(): Promise<{
      status: number
      sid: string | null
      body: string
      retryAfter: string | null
    }> {
      const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(initializeRequest('bare')) })
      return {
        status: r.status,
        sid: r.headers.get('mcp-session-id'),
        body: await r.text(),
        retryAfter: r.headers.get('retry-after'),
      }
    },
    // Whether the MCP session still answers (202 for a notification; 404 once it was closed).
    async alive(sid: string): Promise<boolean> {
      const r = await fetch(url, {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      })
      const text = await r.text()
      if (r.status === 404) assert.match(text, /No such MCP session/)
      else assert.equal(r.status, 202, text)
      return r.status !== 404
    },
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()))
      await mcp.close()
      http.closeAllConnections()
      await new Promise<void>((r) => http.close(() => r()))
    },
  }
}

test('at the bound an initialize closes the oldest unused session; a handshaken client keeps working', async () => {
  const m = await mounted(tempDir('bound-root'), { maxSessions: 3 })
  try {
    const c = await m.connect()
    const bare: string[] = []
    for (let i = 0; i < 10; i++) {
      const r = await m.initialize()
      assert.equal(r.status, 200, r.body)
      assert.ok(r.sid)
      bare.push(r.sid)
    }
    // The client that finished its handshake was kept over sessions that only initialized.
    const out = await run(c, 'print(6 * 7)')
    assert.equal(out.isError, false, textOf(out))
    assert.match(textOf(out), /42/)
    assert.equal(m.sessions, 3, 'never more than the bound')
    // Room for two besides it: the last two kept, every earlier one closed.
    const alive: boolean[] = []
    for (const sid of bare) alive.push(await m.alive(sid))
    assert.deepEqual(alive, [...Array(8).fill(false), true, true])
  } finally {
    await m.close()
  }
})

test('with every session busy an initialize is refused, and gets in once one is idle', async () => {
  const root = tempDir('bound-busy-root')
  const m = await mounted(root, { maxSessions: 1 })
  try {
    const c = await m.connect()
    const started = join(root, 'started')
    const go = join(root, 'go')
    const running = run(
      c,
      `import os, time\nopen(${JSON.stringify(started)}, 'w').close()\n` +
        `while not os.path.exists(${JSON.stringify(go)}):\n    time.sleep(0.02)\nprint('finished')`,
    )
    await waitFor('the block to start', () => existsSync(started), 120_000)
    const refused = await m.initialize()
    assert.equal(refused.status, 503, refused.body)
    assert.equal(refused.sid, null)
    assert.equal(refused.retryAfter, '5')
    const body = JSON.parse(refused.body) as { error: { code: number; data: { code: string } } }
    assert.equal(body.error.data.code, 'mcp.sessions-full')
    // The busy session was not touched.
    writeFileSync(go, '')
    const out = (await running) as CallToolResult
    assert.equal(out.isError, false, textOf(out))
    assert.match(textOf(out), /finished/)
    // Idle now: the next initialize closes it, and its client is told its session is gone.
    const admitted = await m.initialize()
    assert.equal(admitted.status, 200, admitted.body)
    await assert.rejects(run(c, '1'), /No such MCP session/)
  } finally {
    await m.close()
  }
})

test('a session that never sent anything after its initialize expires soon; a used one does not', async () => {
  const m = await mounted(tempDir('bound-idle-root'), { unusedIdleMs: 200 })
  try {
    const c = await m.connect()
    const first = await run(c, 'x = 41')
    assert.equal(first.isError, false, textOf(first))
    const bare = await m.initialize()
    assert.equal(bare.status, 200, bare.body)
    const sid = bare.sid!
    // Watched by the count, not by requests: a request with its id would make it used.
    await waitFor('the unused session to expire', () => m.sessions === 1, 30_000)
    assert.equal(await m.alive(sid), false)
    const out = await run(c, 'print(x + 1)')
    assert.equal(out.isError, false, textOf(out))
    assert.match(textOf(out), /42/)
  } finally {
    await m.close()
  }
})
