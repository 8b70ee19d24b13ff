// The engine as a library: real workers, real SQLite, restarts within one test process.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine, type EventView } from '../../src/engine/index.js'
import { openStore } from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'

const python = process.env.VIS_PYTHON_VERSION
const newHome = () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-engine-home-'))
  process.env.VIS_HOME = home
  return home
}

test('a session outlives its engine: history kept, defs restored in a fresh worker', async () => {
  const home = newHome()
  const root = mkdtempSync(join(tmpdir(), 'vis-engine-root-'))
  const e1 = await createEngine({ home, python, pool: { size: 0 } })
  const s = await e1.createSession({ roots: [root], title: 'durable' })
  const r = await e1.runBlock(s.id, { code: 'def sq(x):\n    return x * x\nSIDE = 3\nprint(sq(SIDE))' })
  assert.equal(r.block.stdout, '9\n')
  assert.equal(r.block.status, 'done')
  await e1.close()

  const e2 = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const view = e2.sessionView(s.id)
    assert.equal(view.worker, 'dormant')
    assert.equal(view.title, 'durable')
    const seen: EventView[] = []
    const off = e2.subscribe(s.id, (ev) => seen.push(ev))
    const again = await e2.runBlock(s.id, { code: 'sq(SIDE) + 1' })
    off()
    assert.equal(again.block.result, 10, JSON.stringify(again.block.error))
    assert.equal(again.block.position, 2)
    assert.deepEqual(
      seen.map((e) => e.type),
      ['defs.restored', 'block.started', 'block.finished'],
    )
    assert.deepEqual((seen[0]!.data as { restored: string[] }).restored.sort(), ['SIDE', 'sq'])
    assert.equal(e2.sessionView(s.id).worker, 'live')
    assert.equal(e2.metrics.workerRestarts.get(), 1)
    assert.equal(e2.getSession(s.id).blocks.length, 2)
  } finally {
    await e2.close()
  }
})

test('blocks left running by a dead host are closed as abandoned when the engine starts', async () => {
  const home = newHome()
  const store = openStore({ home })
  store.sessions.create({ id: 'ses_left', policy: { roots: [], network: {}, shell: false } })
  const { block } = store.blocks.start({ sessionId: 'ses_left', code: 'while True: pass' })
  store.close()

  const engine = await createEngine({ home, python, pool: { size: 0 } })
  try {
    assert.equal(engine.abandonedAtStart, 1)
    const b = engine.getBlock(block.id)
    assert.equal(b.status, 'done')
    assert.equal(b.error?.code, 'block.abandoned')
    const replay = engine.replayEvents('ses_left', 0)
    assert.deepEqual(
      replay.events.map((e) => [e.type, (e.data as { block_id: string }).block_id]),
      [['block.finished', block.id]],
    )
  } finally {
    await engine.close()
  }
})

test('fast output is batched into few events, in order; stored output is capped', async () => {
  const home = newHome()
  const engine = await createEngine({ home, python, pool: { size: 0 }, maxOutputChars: 500 })
  try {
    const s = await engine.createSession()
    const r = await engine.runBlock(s.id, { code: 'for i in range(300):\n    print(i, flush=True)' })
    const events = engine.replayEvents(s.id, 0).events
    const outputs = events.filter((e) => e.type === 'output')
    const text = outputs.map((e) => (e.data as { data: string }).data).join('')
    assert.equal(text, Array.from({ length: 300 }, (_, i) => `${i}\n`).join(''), 'every chunk, in order')
    assert.ok(outputs.length < 100, `300 flushed prints became ${outputs.length} events`)
    assert.deepEqual(
      events.map((e) => e.id),
      events.map((_, i) => i + 1),
    )
    assert.ok(r.block.stdout.length < 600)
    assert.match(r.block.stdout, /\[vis: output truncated, \d+ more characters not kept\]/)
  } finally {
    await engine.close()
  }
})

test('turns are created on first use and belong to one session; closing ends a running block', async () => {
  const home = newHome()
  const engine = await createEngine({ home, python, pool: { size: 0 } })
  // Disposing a busy worker waits for its exit on handles that do not keep the loop alive
  // (src/worker, reported); a server always has its listening socket, this test holds a timer.
  const hold = setInterval(() => {}, 1000)
  try {
    const a = await engine.createSession()
    const b = await engine.createSession()
    const r = await engine.runBlock(a.id, { code: '1', turn_id: 'turn-1' })
    assert.equal(r.block.turn_id, 'turn-1')
    assert.equal(engine.store.turns.get('turn-1')?.sessionId, a.id)
    await assert.rejects(engine.runBlock(b.id, { code: '1', turn_id: 'turn-1' }), (e) =>
      isVisError(e, 'turn.conflict'),
    )

    const sub = await engine.submitBlock(a.id, {
      code: 'import time\nprint("x", flush=True)\ntime.sleep(30)',
    })
    const seen: string[] = []
    engine.subscribe(a.id, (ev) => seen.push(ev.type))
    while (!seen.includes('output')) await new Promise((res) => setTimeout(res, 20))
    const closed = await engine.closeSession(a.id)
    assert.equal(closed.state, 'closed')
    const done = await sub.done
    assert.equal(done.status, 'done')
    assert.ok(done.error, 'the running block ended with an error')
    assert.equal(done.stdout, 'x\n', 'with what it printed')
    assert.deepEqual(seen.slice(-2), ['block.finished', 'session.closed'])
    await assert.rejects(engine.submitBlock(a.id, { code: '1' }), (e) => isVisError(e, 'session.closed'))
    await assert.rejects(engine.submitBlock('nope', { code: '1' }), (e) => isVisError(e, 'session.not-found'))
    // Subscribing checks only that the session exists: a closed one still takes listeners (its
    // events replay), an unknown id is refused.
    engine.subscribe(a.id, () => undefined)()
    assert.throws(
      () => engine.subscribe('nope', () => undefined),
      (e) => isVisError(e, 'session.not-found'),
    )
  } finally {
    await engine.close()
    clearInterval(hold)
  }
})

test('a worker that dies mid-block retires its session: the block is kept, later blocks are refused', async () => {
  const home = newHome()
  const engine = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await engine.createSession()
    const r = await engine.runBlock(s.id, { code: 'import os\nprint("bye", flush=True)\nos._exit(3)' })
    assert.equal(r.block.status, 'done')
    assert.equal(r.block.stdout, 'bye\n')
    assert.equal(r.block.error?.code, 'worker.died')
    assert.equal(engine.sessionView(s.id).worker, 'retired')
    const types = engine.replayEvents(s.id).events.map((e) => e.type)
    assert.ok(types.includes('worker.retired'), JSON.stringify(types))
    assert.equal(types.at(-1), 'block.finished')
    assert.equal(engine.metrics.workerRetirements.get(), 1)
    await assert.rejects(engine.submitBlock(s.id, { code: '1' }), (e) => isVisError(e, 'worker.retired'))
    assert.equal(engine.getSession(s.id).blocks.length, 1, 'the refused block left no row')
  } finally {
    await engine.close()
  }
})
