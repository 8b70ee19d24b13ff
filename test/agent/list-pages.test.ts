// The approvals, a turn's journal and a listed turn's iterations and children are bounded in
// bytes with the one helper (fitBytes) the HTTP lists page with (eighteenth outsider pass): each
// page keeps to SESSION_PAGE_BYTES and the pages together hold every row once, in order.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AgentRecords } from '../../src/agent/records.js'
import type { TurnView } from '../../src/agent/schemas.js'
import { clipTurn, TURN_LIST_CHILDREN, TURN_LIST_ITERATION_BYTES } from '../../src/agent/turn-page.js'
import { fitBytes, jsonValueBytes, SESSION_PAGE_BYTES } from '../../src/persistence/json-bytes.js'
import { openTempStore } from '../persistence/helpers.js'

// Every page of a list read through fitBytes from `from(offset)`, as the routes do.
function pages<T>(from: (offset: number) => Iterable<T>): T[][] {
  const out: T[][] = []
  let offset = 0
  for (;;) {
    const page = fitBytes(from(offset), SESSION_PAGE_BYTES)
    out.push(page.items)
    if (!page.full) return out
    offset += page.items.length
  }
}

test("a turn's journal pages in bytes: every call once, in order, each page within the bound", () => {
  const store = openTempStore({})
  const s = store.sessions.create()
  const records = new AgentRecords(store)
  const turn = store.turns.start({ sessionId: s.id, request: { prompt: 'hi' } })
  // 800 calls with errors of 2000 control characters: ~9.6 MiB of JSON.
  for (let i = 0; i < 800; i++) {
    records.addToolCall({
      sessionId: s.id,
      turnId: turn.id,
      blockId: null,
      tool: `tool_${i}`,
      argsSha256: '0'.repeat(64),
      argsBytes: 1,
      ok: false,
      error: '\u0001'.repeat(2000),
      durationMs: 1,
      resultBytes: null,
      approvalId: null,
    })
  }
  const all = pages((o) => records.toolCallsFrom(turn.id, o))
  assert.ok(all.length >= 3, `${all.length} page(s)`)
  for (const p of all) assert.ok(jsonValueBytes(p) <= SESSION_PAGE_BYTES + 1024)
  assert.deepEqual(
    all.flat().map((c) => c.tool),
    Array.from({ length: 800 }, (_, i) => `tool_${i}`),
  )
})

test("a session's approvals page in bytes: every approval once, in order, each page within the bound", () => {
  const store = openTempStore({})
  const s = store.sessions.create()
  const records = new AgentRecords(store)
  // 12 approvals whose arguments are 200 000 control characters: ~1.1 MiB of JSON each.
  const made = Array.from(
    { length: 12 },
    (_, i) =>
      records.addApproval({
        sessionId: s.id,
        turnId: null,
        blockId: null,
        tool: 'write',
        args: { i, text: '\u0001'.repeat(200_000) },
        reason: 'why',
      }).id,
  )
  const all = pages((o) => records.approvalsFrom(s.id, undefined, o))
  assert.ok(all.length >= 3, `${all.length} page(s)`)
  for (const p of all) assert.ok(jsonValueBytes(p) <= SESSION_PAGE_BYTES)
  assert.deepEqual(
    all.flat().map((a) => a.id),
    made,
  )
})

function turnOf(over: Partial<TurnView>): TurnView {
  return {
    id: 'turn_1',
    session_id: 'ses_1',
    position: 1,
    status: 'done',
    prompt: 'p',
    model: 'm',
    answer: 'a',
    error: null,
    usage: null,
    created_at: new Date(0).toISOString(),
    finished_at: null,
    iterations: [],
    parent: null,
    children: [],
    tree_usage: null,
    ...over,
  }
}

test('a listed turn keeps its last children and its newest iterations within its share, and says so', () => {
  const children = Array.from({ length: TURN_LIST_CHILDREN + 500 }, (_, i) => ({
    session_id: `ses_${i}`,
    turn_id: `turn_${i}`,
    status: 'done' as const,
  }))
  const iterations = Array.from({ length: 40 }, (_, i) => ({
    id: `iter_${i}`,
    position: i,
    model: 'm',
    request_id: null,
    text: '\u0001'.repeat(100_000),
    tool_calls: [{ id: `c${i}`, name: 'python_execution', arguments: '\u0001'.repeat(100_000) }],
    stop: null,
    usage: null,
    block_ids: [],
  }))
  const t = clipTurn(turnOf({ children, iterations, answer: '\u0001'.repeat(100_000) }))
  assert.equal(t.truncated, true)
  assert.equal(t.children.length, TURN_LIST_CHILDREN)
  assert.equal(t.children.at(-1)?.turn_id, `turn_${TURN_LIST_CHILDREN + 499}`)
  assert.ok(t.iterations.length > 0 && t.iterations.length < 40)
  assert.equal(t.iterations.at(-1)?.id, 'iter_39')
  assert.ok(jsonValueBytes(t.iterations) <= TURN_LIST_ITERATION_BYTES)
  assert.equal(t.answer?.length, 65_536)
  assert.ok(jsonValueBytes(t) <= SESSION_PAGE_BYTES)

  // An ordinary turn is listed as it is.
  const small = turnOf({
    children: children.slice(0, 3),
    iterations: [{ ...iterations[0]!, text: 'hi', tool_calls: [] }],
  })
  assert.deepEqual(clipTurn(small), small)
})
