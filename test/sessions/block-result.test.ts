// BlockResult (src/sessions/block-result.ts) is the one definition of a block's result; the
// stored row and the HTTP/MCP view are derived from it. These tests hold the renderings to it:
// every field reaches each of them under its casing, and a result survives the trip through a
// real store into the view unchanged.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { finishFromOutcome } from '../../src/engine/block-finish.js'
import { BlockViewSchema } from '../../src/engine/schemas.js'
import { blockView } from '../../src/engine/views.js'
import { FinishBlockInputSchema } from '../../src/persistence/blocks.js'
import { Store } from '../../src/persistence/index.js'
import { GuestBlockOutcome } from '../../src/protocol/run-block.js'
import { BlockResult, toBlockResult } from '../../src/sessions/block-result.js'
import { type Survived, SurvivedSchema, survivedResult, survivedWire } from '../../src/sessions/survived.js'

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

// Folded into another field by design: attachments are stored as rows of their own (and
// viewed as links), workerReplaced is survived.worker_replaced in the stored and viewed forms.
const FOLDED = new Set(['attachments', 'workerReplaced'])
// The view's fields that describe the block rather than its result.
const ABOUT_THE_BLOCK = [
  'id',
  'session_id',
  'turn_id',
  'position',
  'status',
  'code',
  'duration_ms',
  'created_at',
  'finished_at',
  'attachments',
  'code_display',
  // A session view's block cut to its bounded size says so (GET /v1/sessions/{id}).
  'truncated',
]

const replaced: Survived = {
  cause: 'timeout',
  worker_replaced: true,
  intact: [],
  restored: ['double', 'json'],
  lost: ['handle'],
  cancelled: [{ tool: 'fetch_url', call_id: 7 }],
  // Record keys are data (names, the snapshot marker), never recased.
  errors: { my_func: 'NameError: x', '(snapshot)': 'unusable' },
}

describe('the renderings carry every BlockResult field', () => {
  const fields = Object.keys(BlockResult.shape)

  test('the library result is the guest’s answer plus what the host adds', () => {
    const guest = new Set(Object.keys(GuestBlockOutcome.shape))
    const hostAdds = fields.filter((k) => !guest.has(k)).sort()
    assert.deepEqual(hostAdds, ['survived', 'timedOut', 'workerReplaced'])
    for (const k of fields) assert.equal(k, k.replace(/_/g, ''), `${k}: the library is camelCase`)
  })

  test('the stored row (camelCase) and the HTTP/MCP view (snake_case) name each field', () => {
    const stored = new Set(Object.keys(FinishBlockInputSchema.shape))
    const view = new Set(Object.keys(BlockViewSchema.shape))
    for (const k of fields.filter((f) => !FOLDED.has(f))) {
      assert.ok(stored.has(k), `the stored row has ${k}`)
      assert.ok(view.has(snake(k)), `the view has ${snake(k)}`)
    }
    // Nothing in the view about the result that the result does not hold: no stderr that is
    // always empty (the guest interleaves it into stdout).
    const derived = new Set(fields.map(snake))
    const extra = [...view].filter((k) => !derived.has(k) && !ABOUT_THE_BLOCK.includes(k))
    assert.deepEqual(extra, [])
    assert.ok(!view.has('stderr'))
  })

  test('survived: one schema, camelCase in the library, snake_case everywhere else', () => {
    const lib = survivedResult(replaced)
    assert.deepEqual(Object.keys(lib), [
      'cause',
      'workerReplaced',
      'intact',
      'restored',
      'lost',
      'cancelled',
      'errors',
    ])
    assert.deepEqual(lib.cancelled, [{ tool: 'fetch_url', callId: 7 }])
    assert.deepEqual(lib.errors, replaced.errors)
    // The old names still read, as deprecated aliases that JSON never shows.
    assert.equal(lib.worker_replaced, true)
    assert.equal(lib.cancelled[0]?.call_id, 7)
    assert.doesNotMatch(JSON.stringify(lib), /worker_replaced|call_id/)
    assert.deepEqual(survivedWire(lib), replaced)
    assert.deepEqual(SurvivedSchema.parse(survivedWire(lib)), replaced)
  })
})

describe('a result through a real store into the view', () => {
  const store = new Store({ home: mkdtempSync(join(tmpdir(), 'vis-block-result-')), databaseUrl: '' })
  after(() => store.close())

  test('what the library returned is what the view shows, in snake_case', () => {
    const result = toBlockResult({
      stdout: 'partial\n',
      error: { phase: 'timeout', message: 'the block ran past its 1000 ms limit and was stopped' },
      timedOut: true,
      workerReplaced: true,
      survived: replaced,
    })
    assert.equal(result.survived?.workerReplaced, true)
    const session = store.sessions.create()
    const { block } = store.blocks.start({ sessionId: session.id, code: 'while True: pass' })
    const row = store.blocks.finish(block.id, finishFromOutcome(result, 1000, { maxOutputChars: 1 << 20 }))
    const view = BlockViewSchema.parse(blockView(row, []))
    assert.equal(view.stdout, result.stdout)
    assert.equal(view.timed_out, true)
    assert.equal(view.error?.message, result.error?.message)
    assert.equal(view.error?.code, 'block.timeout')
    assert.deepEqual(view.survived, replaced)
    assert.ok(!('stderr' in view))
  })
})
