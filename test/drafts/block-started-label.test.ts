// The block-started event's draft label (src/engine/events-bridge.ts) and event views built
// only for live listeners
// (src/engine/event-log.ts): neither may change what a client sees. The label is the draft's
// at that block (trunk: null), read from the store each time (another process may change
// it), in the event as replayed and as a subscriber saw it, for a short block committed with
// its finish and for a long one whose start is committed while it still runs.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import { createEngine } from '../../src/engine/index.js'
import type { EventView } from '../../src/engine/schemas.js'
import { newHome, newRepo, python, run, until } from './helpers.js'

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

test('block.started names the draft the block ran in, replayed and live alike, read afresh each block', async () => {
  const home = newHome()
  const root = newRepo()
  const e = await createEngine({ home, python, pool: { size: 0 } })
  const other = new Database(join(home, 'vis.db'))
  try {
    const s = await e.createSession({ roots: [root] })
    const startedOf = (blockId: string): EventView => {
      const ev = e
        .replayEvents(s.id)
        .events.find(
          (v) => v.type === 'block.started' && (v.data as { block_id: string }).block_id === blockId,
        )
      assert.ok(ev, `block-started of ${blockId}`)
      return ev
    }

    // Trunk, nobody subscribed: the stored event is complete and its view well formed.
    const trunk = await run(e, s.id, 'x = 1')
    const t = startedOf(trunk.id)
    assert.equal((t.data as { draft: string | null }).draft, null)
    assert.equal((t.data as { code: string }).code, 'x = 1')
    assert.match(t.at, ISO)

    // In a draft, with a subscriber: what it saw is exactly what a replay returns.
    await e.drafts.create(s.id, 'wip')
    const seen: EventView[] = []
    const off = e.subscribe(s.id, (ev) => seen.push(ev))
    const drafted = await run(e, s.id, 'x = 2')
    off()
    const live = seen.find((v) => v.type === 'block.started')
    assert.ok(live)
    assert.equal((live.data as { draft: string | null }).draft, 'wip')
    assert.deepEqual(live, startedOf(drafted.id))
    // Everything the subscriber saw (the new worker's defs-restored too) is the log, view for view.
    const after = e.replayEvents(s.id, seen[0]!.id - 1).events
    assert.deepEqual(seen, after, 'the subscriber saw every event, in order, as replayed')
    assert.deepEqual(
      seen.map((v) => v.type).filter((t) => t.startsWith('block.')),
      ['block.started', 'block.finished'],
    )

    // Another process renames the draft: the next block's event carries the new label (no
    // stale cache in this process).
    other.prepare("UPDATE drafts SET label = 'renamed' WHERE session_id = ? AND status = 'active'").run(s.id)
    const renamed = await run(e, s.id, 'x = 3')
    assert.equal((startedOf(renamed.id).data as { draft: string | null }).draft, 'renamed')

    // A long block: its start is committed (flush timer, with its first output) while it still
    // runs, with the label.
    const code = ['import time', "print('going', flush=True)", 'while True:', '    time.sleep(0.01)'].join(
      '\n',
    )
    const submitted = await e.submitBlock(s.id, { code })
    const id = submitted.id
    await until(
      () =>
        e
          .replayEvents(s.id)
          .events.some((v) => v.type === 'block.started' && (v.data as { block_id: string }).block_id === id),
      'the running block to be announced',
    )
    assert.equal(e.sessionBlock(s.id, id).status, 'running')
    assert.equal((startedOf(id).data as { draft: string | null }).draft, 'renamed')
    // Stopped by an interrupt (a file written to the real root is not in the draft's view).
    await e.interrupt(s.id, { blockId: id })
    const done = await submitted.done
    assert.equal(done.status, 'done')
    assert.match(JSON.stringify(done.error), /KeyboardInterrupt|interrupt/i)

    // Back on the trunk: null again.
    await e.drafts.abandon(s.id)
    const back = await run(e, s.id, 'x = 4')
    assert.equal((startedOf(back.id).data as { draft: string | null }).draft, null)
  } finally {
    other.close()
    await e.close()
  }
})
