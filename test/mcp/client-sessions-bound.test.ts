// One MCP client keeps a bounded number of live sessions by label (src/mcp/server/sessions.ts):
// past it the label used least recently that runs no block is closed (its next block starts a
// fresh session and says so), and when every one runs a block a new label is refused with
// mcp.client-sessions-full. Real engine, real workers.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import type { McpServePolicy } from '../../src/engine/mcp-config.js'
import { runBlockForClient } from '../../src/mcp/server/execution.js'
import { ClientSessions } from '../../src/mcp/server/sessions.js'
import type { ToolCallExtra } from '../../src/mcp/server/tools.js'
import { isVisError } from '../../src/util/errors.js'
import { python, tempDir } from './helpers.js'

const home = tempDir('client-sessions-bound-home')
const root = tempDir('client-sessions-bound-root')
let engine: Engine
before(async () => {
  engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
})
after(async () => {
  await engine?.close()
})

const policy: McpServePolicy = { roots: [root], network: { enabled: false, deny: [], allow: [] } }
const extra = (): ToolCallExtra =>
  ({ signal: new AbortController().signal, sendProgress: async () => undefined }) as unknown as ToolCallExtra
const text = (r: { content: unknown[] }) =>
  (r.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n')
const state = (id: string) => engine.getSession(id).state

test('past its bound a client closes its least recently used idle session, and refuses when all are busy', async () => {
  const sessions = new ClientSessions(engine, 'MCP bound', [root], undefined, 3)
  const run = (label: string, code: string) =>
    runBlockForClient(engine, sessions, { code, label }, policy, extra())
  for (const label of ['a', 'b', 'c']) {
    const r = await run(label, `name = ${JSON.stringify(label)}\nprint(name)`)
    assert.equal(r.isError, false, text(r))
  }
  const a = sessions.get('a') as string
  const b = sessions.get('b') as string
  // b is used again: a is now the least recently used.
  assert.match(text(await run('b', 'print(name)')), /\bb\b/)
  const d = await run('d', 'print(1)')
  assert.equal(d.isError, false, text(d))
  assert.equal(state(a), 'closed', 'the least recently used session was closed')
  assert.equal(sessions.get('a'), undefined)
  assert.equal(state(b), 'open', 'a recently used session stays')
  // a's next block runs in a fresh session and says why; its globals are gone.
  const again = await run('a', "print(globals().get('name', 'gone'))")
  assert.match(text(again), /closed while unused, to keep at most 3 live sessions/)
  assert.match(text(again), /\bgone\b/)
  assert.notEqual(sessions.get('a'), a)
  assert.equal(
    engine.listSessions({ state: 'open' }).filter((s) => s.title?.startsWith('MCP bound')).length,
    3,
  )

  // Every live label runs a block: a new label is refused with its code, and nothing is closed.
  const releases = ['a', 'b', 'd'].map((l) => sessions.busy(l))
  const live = ['a', 'b', 'd'].map((l) => sessions.get(l) as string)
  await assert.rejects(
    () => sessions.ensure('e', policy),
    (err: unknown) =>
      isVisError(err, 'mcp.client-sessions-full') && /every one is running a block/.test(err.message),
  )
  for (const id of live) assert.equal(state(id), 'open')
  for (const release of releases) release()
  // Once one is idle again, the new label starts.
  const e = await run('e', 'print(2)')
  assert.equal(e.isError, false, text(e))
})
