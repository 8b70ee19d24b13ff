// A block that printed and ends in an expression (issue 31 §5): what the model reads (the agent's
// rendering and MCP's) shows both the printed text and the value, as a notebook does; the block
// contract is unchanged (no `result` for a block with output, in the library and HTTP views); the
// value rides in its own field, stored, so a restarted host renders the same.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { renderBlock } from '../../src/agent/render.js'
import { engineAttachments } from '../../src/agent/transcript.js'
import { blockResult } from '../../src/mcp/server/render.js'
import { pyCall } from './double.js'
import { harness } from './harness.js'

test('printed text and the last expression’s value: both in what the model reads; result stays empty', async () => {
  const h = await harness()
  try {
    // The library: a block with output has no result; the value is its own field.
    const lib = await (await h.engine.runtimeSession(h.sessionId)).runBlock(
      'print("rows:", 3)\n{"total": 6 * 7}',
    )
    assert.equal(lib.stdout, 'rows: 3\n')
    assert.equal(lib.result, undefined)
    assert.deepEqual(lib.value, { total: 42 })

    // The engine's (HTTP) view, stored and read back.
    const { block } = await h.engine.runBlock(h.sessionId, { code: 'print("rows:", 3)\n{"total": 6 * 7}' })
    assert.equal(block.stdout, 'rows: 3\n')
    assert.equal(block.result, null)
    assert.deepEqual(block.value, { total: 42 })
    const stored = h.engine.getBlock(block.id)
    assert.deepEqual([stored.result, stored.value], [null, { total: 42 }])

    // MCP's rendering: the output, then the value.
    const mcp = blockResult(h.engine, stored)
    assert.deepEqual(mcp.content[0], { type: 'text', text: "rows: 3\n→ {'total': 42}" })

    // A last expression that is None (print's) adds nothing; a block that printed nothing keeps
    // its result as before.
    const none = (await h.engine.runBlock(h.sessionId, { code: 'print("only text")' })).block
    assert.deepEqual([none.result, none.value], [null, null])
    assert.equal((blockResult(h.engine, none).content[0] as { text: string }).text, 'only text')
    const plain = (await h.engine.runBlock(h.sessionId, { code: '6 * 7' })).block
    assert.deepEqual([plain.result, plain.value], [42, null])

    // The agent: the model's next request carries both, and after a restart the rebuilt
    // conversation renders the block the same way.
    h.double.script([{ calls: [pyCall('print("rows:", 3)\n{"total": 6 * 7}')] }, { text: 'the total is 42' }])
    const r = await h.agent.turn(h.sessionId, 'count them')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    const sent = JSON.stringify(h.double.requests.at(-1)!.body)
    assert.ok(sent.includes('rows: 3\\n\\nresult: {\\"total\\":42}'), sent.slice(-600))
    const agentBlock = h.engine.getBlock(r.iterations[0]!.block_ids[0]!)
    const [part] = renderBlock(agentBlock, engineAttachments(h.engine, h.sessionId), false)
    assert.deepEqual(part, { type: 'text', text: 'rows: 3\n\nresult: {"total":42}' })
    await h.restart()
    h.double.script([{ text: 'still 42' }])
    await h.agent.turn(h.sessionId, 'and again?')
    assert.ok(
      JSON.stringify(h.double.requests.at(-1)!.body).includes('rows: 3\\n\\nresult: {\\"total\\":42}'),
    )
  } finally {
    await h.close()
  }
})
