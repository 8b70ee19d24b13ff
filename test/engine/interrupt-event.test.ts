// The `interrupt` event names the block the interrupt was sent to (src/engine/events-bridge.ts).
// The worker's acknowledgement, which the event waits for (it says whether the interrupt
// landed), can reach the host after that block's own reply: by then the block is no longer
// current, and the next one may already run. The event must still name the interrupted block.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { readOnlyDrafts } from '../../src/drafts/drafts.js'
import { EventLog } from '../../src/engine/event-log.js'
import { type BridgeDeps, onRuntimeEvent } from '../../src/engine/events-bridge.js'
import { newLive } from '../../src/engine/live.js'
import { engineMetrics } from '../../src/engine/metrics.js'
import { Store } from '../../src/persistence/index.js'

function setup() {
  const home = mkdtempSync(join(tmpdir(), 'vis-interrupt-event-'))
  const store = new Store({ home, databaseUrl: '' })
  after(() => store.close())
  const log = new EventLog(store)
  const zero = () => 0
  const deps: BridgeDeps = {
    log,
    drafts: readOnlyDrafts(store.db, home),
    metrics: engineMetrics({
      sessionsOpen: zero,
      sessionsLive: zero,
      blocksRunning: zero,
      poolSize: zero,
      workerProcesses: zero,
    }),
    limits: { maxOutputChars: 1000 },
  }
  const session = store.sessions.create()
  const live = newLive(session.id)
  const interruptEvents = () => {
    log.flush(session.id)
    return store.events
      .replay(session.id, 0)
      .events.filter((e) => e.type === 'interrupt')
      .map((e) => e.data as { block_id: string | null; landed: boolean })
  }
  // The worker started a block: what execute() hands over, then the runtime's event.
  const start = (n: number) => {
    const block = store.blocks.start({ sessionId: session.id, code: `b${n}` }).block
    live.starting = block
    onRuntimeEvent(deps, live, { type: 'block.started', sessionId: session.id, block: n, code: block.code })
    return block.id
  }
  const finish = () => {
    live.currentBlock = undefined // as execute() does when the block's reply arrives
  }
  const interrupt = (n: number, landed = true) =>
    onRuntimeEvent(deps, live, { type: 'interrupt', sessionId: session.id, block: n, landed, retired: false })
  // The block each interrupt event names, in order.
  const named = () => interruptEvents().map((e) => e.block_id)
  return { start, finish, interrupt, interruptEvents, named }
}

for (const [when, finishedFirst] of [
  ['lands while its block runs', false],
  ['arrives after its block finished', true],
] as const) {
  test(`an acknowledgement that ${when} names that block, not null`, () => {
    const s = setup()
    const id = s.start(1)
    if (finishedFirst) s.finish()
    s.interrupt(1)
    assert.deepEqual(s.named(), [id])
  })
}

test('an acknowledgement that arrives once the next block runs names the interrupted one, not the next', () => {
  const s = setup()
  const first = s.start(1)
  s.finish()
  const second = s.start(2)
  s.interrupt(1, false)
  s.interrupt(2)
  assert.deepEqual(
    s.interruptEvents().map((e) => [e.block_id, e.landed]),
    [
      [first, false],
      [second, true],
    ],
  )
})

test('only the last few started blocks are remembered; an unknown number names no block', () => {
  const s = setup()
  for (let n = 1; n <= 10; n++) {
    s.start(n)
    s.finish()
  }
  s.interrupt(1)
  s.interrupt(10)
  const ids = s.named()
  assert.equal(ids[0], null)
  assert.match(String(ids[1]), /^blk_/)
})
