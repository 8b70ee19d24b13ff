// MCP over Streamable HTTP at /mcp on `vis serve`'s own app: the SDK's client on loopback,
// through the API's bearer-token middleware.
import assert from 'node:assert/strict'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { createAdaptorServer } from '@hono/node-server'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { Hono } from 'hono'
import { startServer, type VisServer } from '../../src/http/server.js'
import { mountMcp } from '../../src/mcp/server/transport-http.js'
import { python, tempDir, textOf, waitFor } from './helpers.js'
import { clientOptions, withRoots } from './roots.js'
import { serverScenarios } from './scenarios.js'

const home = tempDir('http-home')
const root = tempDir('http-root')
const TOKEN = 'mcp-test-token-0123456789'
let server: VisServer
const clients: Client[] = []

before(async () => {
  server = await startServer({
    home,
    python,
    port: 0,
    pool: { size: 0 },
    token: TOKEN,
    mcp: { roots: [root], network: { enabled: false, allow: [], deny: [] } },
  })
})
after(async () => {
  await Promise.allSettled(clients.map((c) => c.close()))
  await server.close()
})

async function connect(opts: { roots?: () => string[] } = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
  })
  const client = withRoots(new Client({ name: 'vis-test', version: '1.0.0' }, clientOptions(opts)), opts)
  await client.connect(transport, { timeout: 60_000 })
  clients.push(client)
  return client
}

describe('MCP over Streamable HTTP on vis serve', () => {
  serverScenarios(connect, root)

  test('/mcp passes the API token check: no token, no MCP', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const denied = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(init) })
    assert.equal(denied.status, 401)
    assert.equal(((await denied.json()) as any).error.code, 'http.unauthorized')
    const anon = new Client({ name: 'anon', version: '1' })
    await assert.rejects(anon.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`))))
    const ok = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(init),
    })
    assert.equal(ok.status, 200)
    assert.ok(ok.headers.get('mcp-session-id'))
    await ok.body?.cancel()
  })

  test('an unknown MCP session is 404, a GET without one is 400', async () => {
    const auth = { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' }
    const unknown = await fetch(`${server.url}/mcp`, { headers: { ...auth, 'mcp-session-id': 'nope' } })
    assert.equal(unknown.status, 404)
    assert.match(((await unknown.json()) as any).error.message, /No such MCP session/)
    const bare = await fetch(`${server.url}/mcp`, { headers: auth })
    assert.equal(bare.status, 400)
  })

  test('closing an MCP session closes its vis sessions; their history stays', async () => {
    const c = await connect()
    const r = await c.callTool({ name: 'python_execution', arguments: { code: 'print("kept")' } })
    const sessionId = (r._meta as Record<string, string>)['vis/session']!
    assert.equal(server.engine.sessionView(sessionId).state, 'open')
    await (c.transport as StreamableHTTPClientTransport).terminateSession()
    const end = Date.now() + 30_000
    while (server.engine.sessionView(sessionId).state !== 'closed' && Date.now() < end) {
      await new Promise((res) => setTimeout(res, 25))
    }
    assert.equal(server.engine.sessionView(sessionId).state, 'closed')
    assert.equal(server.engine.getSession(sessionId).blocks[0]!.stdout, 'kept\n')
  })

  test('an idle MCP session expires with its vis sessions; one running a block does not', async () => {
    const app = new Hono()
    const mounted = mountMcp(app, server.engine, {
      policy: { roots: [root], network: { enabled: false, allow: [], deny: [] } },
      idleMs: 300,
    })
    const http = createAdaptorServer({ fetch: app.fetch }) as Server
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()))
    const c = new Client({ name: 'idle', version: '1' })
    try {
      await c.connect(
        new StreamableHTTPClientTransport(
          new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
        ),
      )
      // Runs past the idle limit several times over: a busy session is never swept.
      const r = await c.callTool({
        name: 'python_execution',
        arguments: { code: 'import time\ntime.sleep(1.5)\nprint("done")' },
      })
      assert.equal(textOf(r as CallToolResult), 'done')
      const sessionId = (r._meta as Record<string, string>)['vis/session']!
      await waitFor(
        'the idle session to expire',
        () => server.engine.sessionView(sessionId).state === 'closed',
      )
      await assert.rejects(
        c.callTool({ name: 'python_execution', arguments: { code: '1' } }),
        /No such MCP session/,
      )
    } finally {
      await c.close().catch(() => undefined)
      await mounted.close()
      http.closeAllConnections()
      await new Promise<void>((r) => http.close(() => r()))
    }
  })
})
