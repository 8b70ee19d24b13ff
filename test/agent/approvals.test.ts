// The approval gate and the tool-call journal, through real sessions: a tool bound with
// { approval: 'required' } makes its awaiting block wait for a decision.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadAgentConfig } from '../../src/agent/config.js'
import type { AgentEvent } from '../../src/agent/host.js'
import { agentFor } from '../../src/agent/index.js'
import { AgentRecords } from '../../src/agent/records.js'
import type { ApprovalView } from '../../src/agent/schemas.js'
import { createEngine } from '../../src/engine/index.js'
import { openStore } from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'
import { pyCall } from './double.js'
import { type Harness, harness, lastChatMessage, until } from './harness.js'

async function bindDeploy(h: Harness, sessionId = h.sessionId) {
  const ran: string[] = []
  const rs = await h.engine.runtimeSession(sessionId)
  await rs.bind(
    'deploy',
    async (env: string) => {
      ran.push(env)
      return { deployed: env }
    },
    { doc: 'Deploy the app.', signature: '(env)', approval: 'required' },
  )
  return ran
}

const requested = (events: AgentEvent[]) =>
  events.filter((e) => e.type === 'approval.requested').map((e) => e.approval as ApprovalView)

// The model calls deploy once, then answers with whatever the block reported.
const script = (h: Harness) =>
  h.double.script([
    { calls: [pyCall('r = await deploy("prod")\nprint(r)')] },
    (req) => ({ text: lastChatMessage(req.body).content }),
  ])

// A turn whose block waits in `await deploy("prod")` for a decision.
async function awaitingDeploy(h: Harness, signal?: AbortSignal) {
  const ran = await bindDeploy(h)
  script(h)
  const turn = await h.agent.startTurn(h.sessionId, 'ship it', signal ? { signal } : {})
  await until('the approval is requested', () => requested(h.events).length === 1)
  return { ran, turn, approval: requested(h.events)[0]! }
}

test('approved: the block waits in its await, then the tool runs; the journal says who approved', async () => {
  const h = await harness()
  try {
    const { ran, turn, approval: a } = await awaitingDeploy(h)
    assert.equal(a.tool, 'deploy')
    assert.deepEqual(a.args, ['prod'])
    assert.equal(a.status, 'pending')
    assert.equal(a.turn_id, turn.turnId)
    assert.ok(a.block_id)
    assert.deepEqual(ran, [], 'nothing runs before the decision')
    assert.deepEqual(
      h.agent.listApprovals(h.sessionId, 'pending').map((x) => x.id),
      [a.id],
    )
    // The prompt told the model this tool waits for a person.
    assert.match(
      h.double.requests[0]!.body.messages[0].content,
      /## deploy\(env\) \[each call waits for a person to approve it\]/,
    )
    const decided = h.agent.decide(h.sessionId, a.id, 'approve', 'alice', 'go')
    assert.equal(decided.status, 'approved')
    const r = await turn.done
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, "{'deployed': 'prod'}\n")
    assert.deepEqual(ran, ['prod'])
    const [entry] = h.agent.journal(h.sessionId, r.id)
    assert.equal(entry?.tool, 'deploy')
    assert.equal(entry?.ok, true)
    assert.equal(entry?.args_sha256, createHash('sha256').update('["prod"]').digest('hex'))
    assert.equal(entry?.args_bytes, 8)
    assert.equal(entry?.result_bytes, JSON.stringify({ deployed: 'prod' }).length)
    assert.deepEqual(entry?.approval, { id: a.id, status: 'approved', decided_by: 'alice' })
    assert.equal(entry?.block_id, a.block_id)
    assert.ok(h.events.some((e) => e.type === 'approval.resolved'))
    // A settled approval cannot be decided again; an unknown one is not found.
    assert.throws(
      () => h.agent.decide(h.sessionId, a.id, 'deny', 'mallory'),
      (e) => isVisError(e, 'approval.settled'),
    )
    assert.throws(
      () => h.agent.decide(h.sessionId, 'apr_nope', 'deny', 'x'),
      (e) => isVisError(e, 'approval.not-found'),
    )
  } finally {
    await h.close()
  }
})

test('denied: the await raises in the guest with the note; the tool never runs', async () => {
  const h = await harness()
  try {
    const { ran, turn, approval } = await awaitingDeploy(h)
    h.agent.decide(h.sessionId, approval.id, 'deny', 'bob', 'not on a Friday')
    const r = await turn.done
    assert.match(r.answer!, /^✗ \w+ error: .*deploy: the call was denied by bob: not on a Friday/)
    assert.deepEqual(ran, [])
    const [entry] = h.agent.journal(h.sessionId, r.id)
    assert.equal(entry?.ok, false)
    assert.match(entry!.error!, /denied by bob/)
    assert.deepEqual(entry?.approval, { id: approval.id, status: 'denied', decided_by: 'bob' })
  } finally {
    await h.close()
  }
})

test('an approval nobody answers is cancelled by its timeout; an interrupt cancels one too', async () => {
  const h = await harness({ config: { approvals: { auto: 'ask', timeoutMs: 300, rules: [] } } })
  try {
    const ran = await bindDeploy(h)
    script(h)
    const r = await h.agent.turn(h.sessionId, 'ship it')
    assert.match(
      r.answer!,
      /deploy: the approval was cancelled \(no decision within 300 ms\); the call did not run/,
    )
    assert.deepEqual(ran, [])
    assert.equal(h.agent.listApprovals(h.sessionId)[0]?.status, 'cancelled')
  } finally {
    await h.close()
  }
  const h2 = await harness()
  try {
    const ac = new AbortController()
    const { ran, turn } = await awaitingDeploy(h2, ac.signal)
    ac.abort()
    const r = await turn.done
    assert.equal(r.status, 'cancelled')
    const [a] = h2.agent.listApprovals(h2.sessionId)
    assert.equal(a?.status, 'cancelled')
    assert.equal(a?.note, 'the block was interrupted while waiting')
    assert.deepEqual(ran, [])
  } finally {
    await h2.close()
  }
})

test("waiting for a person does not count toward the block's timeout: approved after it, the block finishes", async () => {
  // The block may run 600 ms of its own; the person answers 3 s after asking. Before the
  // deadline's hold, the block was interrupted at 600 ms and the approval cancelled with it.
  const h = await harness({
    config: { blockTimeoutMs: 600, approvals: { auto: 'ask', timeoutMs: 60_000, rules: [] } },
  })
  try {
    const { ran, turn, approval } = await awaitingDeploy(h)
    const asked = performance.now()
    // Past the block's timeout and the kill's grace after it, the approval is still pending.
    await until(
      'the block has waited past its timeout and grace',
      () => performance.now() - asked > 3_000,
      10_000,
    )
    assert.equal(h.agent.listApprovals(h.sessionId)[0]?.status, 'pending')
    h.agent.decide(h.sessionId, approval.id, 'approve', 'alice')
    const r = await turn.done
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, "{'deployed': 'prod'}\n")
    assert.deepEqual(ran, ['prod'])
  } finally {
    await h.close()
  }
  // The clocks run again once the wait is over: a block that loops after its approval is
  // still stopped at its timeout.
  const h2 = await harness({
    config: { blockTimeoutMs: 800, approvals: { auto: 'approve', timeoutMs: 60_000, rules: [] } },
  })
  try {
    await bindDeploy(h2)
    h2.double.script([
      { calls: [pyCall('r = await deploy("prod")\nwhile True:\n    pass')] },
      (req) => ({ text: lastChatMessage(req.body).content }),
    ])
    const r = await h2.agent.turn(h2.sessionId, 'ship it')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.match(r.answer!, /timeout|timed out|interrupted/i)
  } finally {
    await h2.close()
  }
})

test('auto-policy and rules: a rule gates matching calls only; auto deny refuses them as "policy"', async () => {
  const h = await harness({
    config: { approvals: { auto: 'deny', timeoutMs: 60_000, rules: [{ tool: 'note', match: 'secret' }] } },
  })
  try {
    const rs = await h.engine.runtimeSession(h.sessionId)
    const notes: string[] = []
    await rs.bind('note', async (s: string) => notes.push(s), { signature: '(text)' })
    h.double.script([
      {
        calls: [
          pyCall(
            'await note("hello")\ntry:\n    await note("the secret")\nexcept Exception as e:\n    print(e)',
          ),
        ],
      },
      (req) => ({ text: lastChatMessage(req.body).content }),
    ])
    const r = await h.agent.turn(h.sessionId, 'write notes')
    assert.deepEqual(notes, ['hello'])
    assert.match(r.answer!, /note: the call was denied by policy: auto-policy: deny/)
    const journal = h.agent.journal(h.sessionId, r.id)
    assert.deepEqual(
      journal.map((j) => [j.tool, j.ok, j.approval?.status ?? null, j.approval?.decided_by ?? null]),
      [
        ['note', true, null, null],
        ['note', false, 'denied', 'policy'],
      ],
    )
  } finally {
    await h.close()
  }
})

test('outside any turn, a tool that needs approval is refused: nothing could grant it', async () => {
  const h = await harness()
  try {
    const ran = await bindDeploy(h)
    const r = await h.engine.runBlock(h.sessionId, { code: 'await deploy("prod")' })
    assert.match(
      r.block.error!.message,
      /deploy needs a person's approval and nothing in this session can ask for it/,
    )
    assert.deepEqual(ran, [])
  } finally {
    await h.close()
  }
})

test('a listener may decide the moment it hears of the approval (the README pattern)', async () => {
  const h = await harness()
  try {
    const ran = await bindDeploy(h)
    const session = h.agent.session(h.sessionId)
    session.on((ev) => {
      if (ev.type === 'approval.requested')
        session.decide((ev.approval as ApprovalView).id, 'approve', 'listener')
    })
    script(h)
    const r = await session.turn('ship it')
    assert.equal(r.answer, "{'deployed': 'prod'}\n")
    assert.deepEqual(ran, ['prod'])
    assert.equal(session.approvals()[0]?.decided_by, 'listener')
  } finally {
    await h.close()
  }
})

test('agent turns and approvals left open by a host that died are closed when the next one starts', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-agent-dead-home-'))
  // What a host killed mid-turn leaves behind: an agent turn (it has a model) still open and an
  // approval still pending; beside them, a turn of the block API, which is not the agent's.
  const store = openStore({ home })
  store.sessions.create({ id: 'ses_dead', policy: { roots: [], network: {}, shell: false } })
  store.turns.start({ id: 'turn_agent', sessionId: 'ses_dead', request: { prompt: 'x' } })
  const records = new AgentRecords(store)
  records.setTurnModel('turn_agent', 'openai/m')
  records.addApproval({
    sessionId: 'ses_dead',
    turnId: 'turn_agent',
    blockId: null,
    tool: 't',
    args: [],
    reason: 'r',
  })
  store.turns.start({ id: 'turn_blocks', sessionId: 'ses_dead' })
  store.close()

  const engine = await createEngine({
    home,
    pool: { size: 0 },
    extensions: false,
    python: process.env.VIS_PYTHON_VERSION,
  })
  try {
    const agent = agentFor(engine, loadAgentConfig({ home }))
    assert.equal(agent.abandonedAtStart, 1)
    const t = agent.getTurn('ses_dead', 'turn_agent')
    assert.equal(t.status, 'failed')
    assert.deepEqual(t.error, {
      code: 'turn.abandoned',
      message: 'The host stopped while this turn was running.',
    })
    assert.deepEqual(
      agent.listApprovals('ses_dead').map((a) => [a.status, a.note]),
      [['cancelled', 'the host stopped']],
    )
    assert.equal(engine.store.turns.require('turn_blocks').status, 'open')
  } finally {
    await engine.close()
  }
})
