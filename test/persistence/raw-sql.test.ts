// The modules that write SQL of their own beside the repositories (src/drafts/repo.ts,
// src/agent/records.ts) run on both backends too (issue 19).
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { AgentRecords } from '../../src/agent/records.js'
import { DraftsRepo } from '../../src/drafts/repo.js'
import { isVisError } from '../../src/util/errors.js'
import { BACKENDS, openTempStore } from './helpers.js'

const usage = { input: 10, output: 5, reasoning: 0, cached: 0, cost_usd: null }

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('drafts: one active per session, ended ones listed in creation order', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create()
      const drafts = new DraftsRepo(store.db)
      const base = { sessionId: s.id, kind: 'copy' as const, root: '/r', dir: '/d', baseAt: 1234.5678 }
      const first = drafts.create({ id: 'drf_1', label: 'one', ...base })
      assert.equal(first.status, 'active')
      assert.equal(first.baseAt, 1234.5678)
      assert.throws(
        () => drafts.create({ id: 'drf_2', label: 'two', ...base }),
        (e: unknown) => isVisError(e, 'draft.exists'),
      )
      assert.equal(drafts.end('drf_1', 'applied', null).status, 'applied')
      drafts.create({ id: 'drf_3', label: 'three', ...base })
      assert.equal(drafts.active(s.id)?.id, 'drf_3')
      assert.deepEqual(
        drafts.list(s.id).map((d) => [d.id, d.status]),
        [
          ['drf_1', 'applied'],
          ['drf_3', 'active'],
        ],
      )
    })

    test('agent records: iterations, the finished turn, and what a restart closes', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create()
      const records = new AgentRecords(store)
      const done = store.turns.start({ sessionId: s.id, request: { prompt: 'hi' } })
      records.setTurnModel(done.id, 'openai/gpt-x')
      records.addIteration(done.id, 'iter_1', {
        model: 'openai/gpt-x',
        requestId: 'req_1',
        text: 'hello',
        toolCalls: [{ id: 'c1', name: 'python_execution', arguments: '{"code":"1"}' }],
        usage,
        stop: 'stop',
        reasoning: null,
      })
      records.finishTurn(done.id, 'done', { answer: 'hello', error: null, usage })
      const view = records.turn(done.id)
      assert.equal(view?.status, 'done')
      assert.equal(view?.iterations[0]?.text, 'hello')
      assert.deepEqual(records.turnIds(s.id), [done.id])

      // An agent turn left open by a stopped host: SQLite's home closes it at start; on
      // PostgreSQL it may be another node's live turn, so it is left alone.
      const open = store.turns.start({ sessionId: s.id, request: { prompt: 'again' } })
      records.setTurnModel(open.id, 'openai/gpt-x')
      assert.equal(records.abandonLeftovers(), backend === 'sqlite' ? 1 : 0)
      assert.equal(records.turn(open.id)?.status, backend === 'sqlite' ? 'failed' : 'running')
    })
  })
}
