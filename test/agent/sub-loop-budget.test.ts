// A turn's token/cost budget and its sub_loop children (issue 31 §1): each child draws on what is
// left of its parent's budget; a child that finds it spent ends with agent.budget-exceeded,
// raised in the parent's block (never a hung parent), and the parent stops before its next
// request. Against the provider double, with real sessions.
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { VisError } from '../../src/util/errors.js'
import { client } from '../http/helpers.js'
import { ProviderDouble, pyCall, type Recorded, type Scripted } from './double.js'
import { harness, python } from './harness.js'

// The parent starts one child and prints what its call raised; the child keeps working (a
// block per reply) until something stops it. Every request is priced at `each` tokens.
function model(each: { input: number; output: number }) {
  return (req: Recorded): Scripted => {
    const b = JSON.stringify(req.body)
    if (b.includes('HUNGRY-CHILD') && !b.includes('PARENT-TASK'))
      return { calls: [pyCall('print("working")')], usage: each }
    if (b.includes('CAU' + 'GHT') || b.includes('child said')) return { text: 'parent done', usage: each }
    return {
      calls: [
        pyCall(
          'try:\n    print("child said", await sub_loop("HUNGRY-CHILD", max_iterations=50))\nexcept Exception as e:\n    print("CAU" + "GHT", e.code, str(e))',
        ),
      ],
      usage: each,
    }
  }
}

test('a child spending the rest of its parent’s token budget ends with agent.budget-exceeded in the parent’s block; the parent stops too', async () => {
  const h = await harness({ config: { model: 'openai/double-model' } })
  try {
    h.double.script([], model({ input: 50, output: 10 }))
    const r = await h.agent.turn(h.sessionId, 'PARENT-TASK: let a helper work', { budget: { tokens: 300 } })
    // The parent's first request (60), then the child's until the tree's 300 are used: 60 · 5.
    const block = h.engine.getBlock(r.iterations[0]!.block_ids[0]!)
    assert.equal(block.error, null, JSON.stringify(block.error))
    assert.match(
      block.stdout ?? '',
      /^CAUGHT agent\.budget-exceeded sub_loop: The child turn in session ses_\w+ ended without an answer: The turn stopped before its next model request: 300 tokens used of the parent turn's budget of 300\./,
    )
    const kid = h.agent.getTurn(r.children[0]!.session_id, r.children[0]!.turn_id)
    assert.equal(kid.status, 'failed')
    assert.equal(kid.error?.code, 'agent.budget-exceeded')
    assert.equal(kid.iterations.length, 4)
    // The parent's next request would spend past it: the parent ends failed, with the reason.
    assert.equal(r.status, 'failed')
    assert.equal(r.error?.code, 'agent.budget-exceeded')
    assert.match(r.error!.message, /300 tokens used of the turn's budget of 300/)
    assert.equal(r.iterations.length, 1)
    assert.equal(r.tree_usage!.input + r.tree_usage!.output, 300)

    // The same work under a budget it fits in: the child answers when it is told to stop.
    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('HUNGRY-CHILD') && !b.includes('PARENT-TASK'))
        return { text: 'child finished', usage: { input: 50, output: 10 } }
      return model({ input: 50, output: 10 })(req)
    })
    // (A fresh session: the first one's conversation holds the first turn's output.)
    const fresh = await h.engine.createSession({ roots: [h.root] })
    const ok = await h.agent.turn(fresh.id, 'PARENT-TASK: again', { budget: { tokens: 300 } })
    assert.equal(ok.status, 'done', JSON.stringify(ok.error))
    const okBlock = h.engine.getBlock(ok.iterations[0]!.block_ids[0]!)
    assert.equal(okBlock.stdout, 'child said child finished\n')
    assert.equal(ok.tree_usage!.input + ok.tree_usage!.output, 180)
  } finally {
    await h.close()
  }
})

test('a cost budget from agent.json counts priced requests across the tree; an unpriced model is refused up front', async () => {
  const h = await harness({
    config: {
      model: 'openai/double-model',
      // $10 per million input and output tokens: 60 tokens a request cost $0.0006.
      prices: { 'double-model': { input: 10, output: 10 } },
      budget: { cost_usd: 0.0018 },
    },
  })
  try {
    h.double.script([], model({ input: 50, output: 10 }))
    const r = await h.agent.turn(h.sessionId, 'PARENT-TASK: let a helper work')
    const block = h.engine.getBlock(r.iterations[0]!.block_ids[0]!)
    assert.match(
      block.stdout ?? '',
      /^CAUGHT agent\.budget-exceeded .*\$0\.0018 spent of the parent turn's budget of \$0\.0018/,
    )
    const kid = h.agent.getTurn(r.children[0]!.session_id, r.children[0]!.turn_id)
    assert.equal(kid.iterations.length, 2)
    assert.equal(r.status, 'failed')
    assert.equal(r.error?.code, 'agent.budget-exceeded')
    assert.equal(r.tree_usage!.cost_usd, 0.0018)

    // A model without a price cannot be held to a cost budget: refused before anything runs.
    await assert.rejects(
      h.agent.turn(h.sessionId, 'hello', { model: 'anthropic/unpriced-model' }),
      (err: unknown) =>
        err instanceof VisError &&
        err.code === 'agent.budget-unpriced' &&
        /anthropic\/unpriced-model has no price in agent\.json "prices"/.test(err.message),
    )
  } finally {
    await h.close()
  }
})

test('over HTTP: a turn body’s budget is kept; a malformed one is refused with 400 before anything runs', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-budget-http-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-budget-http-root-'))
  process.env.VIS_HOME = home
  const double = await new ProviderDouble().start()
  writeFileSync(
    join(home, 'agent.json'),
    JSON.stringify({
      model: 'openai/double-model',
      providers: { openai: { baseURL: double.openaiURL, apiKey: 'sk-http' } },
    }),
  )
  const server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false })
  const call = client(server.url)
  try {
    const s = (await call('POST', '/v1/sessions', { roots: [root] })).body
    double.script([], model({ input: 50, output: 10 }))
    const r = await call('POST', `/v1/sessions/${s.id}/turns`, {
      prompt: 'PARENT-TASK: let a helper work',
      budget: { tokens: 180 },
    })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.body.status, 'failed')
    assert.equal(r.body.error.code, 'agent.budget-exceeded')
    assert.equal(r.body.tree_usage.input + r.body.tree_usage.output, 180)

    const bad = await call('POST', `/v1/sessions/${s.id}/turns`, { prompt: 'x', budget: { tokens: 0 } })
    assert.equal(bad.status, 400, bad.text)
    assert.match(bad.text, /budget/)
  } finally {
    await server.close()
    await double.close()
  }
})
