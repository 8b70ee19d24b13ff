// The stdio transport's hand check of a request's envelope (src/mcp/server/stdio-lines.ts) against
// the SDK's schema, and a real `vis mcp` reading lines the SDK's transport reads alike: requests
// split across writes, CRLF endings, envelopes it must not route (no reply, the server goes on),
// params its tool refuses (a JSON-RPC error naming them).
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { JSONRPCRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { isRequestEnvelope } from '../../src/mcp/server/stdio-lines.js'
import { requestRouter } from '../../src/mcp/server/transport-stdio.js'
import { initializeRequest, spawnMcp, tempDir } from './helpers.js'

describe('the stdio transport', () => {
  test('the request envelope is accepted and refused exactly where the SDK schema accepts and refuses it', () => {
    const values: unknown[] = [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'x', arguments: {} } },
      { jsonrpc: '2.0', id: 0, method: '', params: {} },
      { jsonrpc: '2.0', id: -7, method: 'ping' },
      { jsonrpc: '2.0', id: 1.5, method: 'ping' },
      { jsonrpc: '2.0', id: null, method: 'ping' },
      { jsonrpc: '2.0', id: true, method: 'ping' },
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 7 },
      { jsonrpc: '2.0', id: 1, method: 'ping', extra: 1 },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: [] },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: null },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: 'x' },
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      [],
      null,
      'ping',
      42,
    ]
    for (const v of values) {
      // The SDK checks params' _meta too; the method's own schema does that after routing.
      assert.equal(isRequestEnvelope(v), JSONRPCRequestSchema.safeParse(v).success, JSON.stringify(v))
    }
  })

  test("the SDK this package pins has the request router vis mcp hands requests to (else they take the SDK's slower path)", async () => {
    const server = new Server({ name: 'probe', version: '1' }, { capabilities: {} })
    const route = requestRouter(server)
    assert.equal(typeof route, 'function')
    // Routed like the SDK's own path: an unknown method is answered "method not found".
    const sent: unknown[] = []
    await server.connect({
      start: async () => undefined,
      close: async () => undefined,
      send: async (m) => {
        sent.push(m)
      },
    })
    route!({ jsonrpc: '2.0', id: 9, method: 'no/such' })
    for (let i = 0; i < 100 && sent.length === 0; i++) await new Promise((r) => setImmediate(r))
    assert.deepEqual(sent, [{ jsonrpc: '2.0', id: 9, error: { code: -32601, message: 'Method not found' } }])
    await server.close()
  })

  test('vis mcp answers split and CRLF-ended requests, skips what is not a request, and names bad params', async () => {
    const { child, out, exited } = spawnMcp(tempDir('lines-root'), tempDir('lines-home'))
    const line = (m: unknown) => `${JSON.stringify(m)}\n`
    const init = line(initializeRequest('lines'))
    // The initialize request in two writes, cut mid-line.
    child.stdin.write(init.slice(0, 20))
    child.stdin.write(init.slice(20))
    child.stdin.write(line({ jsonrpc: '2.0', method: 'notifications/initialized' }))
    // Not requests the server may answer: an unknown key, a fractional id, not JSON.
    child.stdin.write(line({ jsonrpc: '2.0', id: 2, method: 'tools/list', extra: true }))
    child.stdin.write(line({ jsonrpc: '2.0', id: 2.5, method: 'tools/list' }))
    child.stdin.write('{"jsonrpc": "2.0", "id": 3, \n')
    // A tools/call its schema refuses (no name), then one that runs, CRLF-ended.
    child.stdin.write(line({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { arguments: {} } }))
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'python_execution', arguments: { code: 'print(6 * 7)' } } })}\r\n`,
    )
    child.stdin.end()
    assert.equal(await exited, 0, out.stderr)
    const replies = out.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: number; result?: any; error?: { code: number; message: string } })
    assert.deepEqual(replies.map((r) => r.id).sort(), [1, 4, 5], out.stdout)
    const bad = replies.find((r) => r.id === 4)
    // The SDK's router answers a refused schema with a JSON-RPC error that names the field.
    assert.equal(typeof bad?.error?.code, 'number', JSON.stringify(bad))
    assert.match(bad?.error?.message ?? '', /"name"/)
    assert.equal(bad?.result, undefined)
    const ran = replies.find((r) => r.id === 5)
    assert.equal(ran?.result?.isError, false, JSON.stringify(ran))
    assert.equal(ran?.result?.content[0]?.text, '42')
  })
})
