import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { describe, test } from 'node:test'
import { Store } from '../../src/persistence/index.js'
import { expectedAttachment, expectedStdout } from './fixtures/crash-payload.js'
import { BACKENDS, tempPlace } from './helpers.js'

const WRITER = join(import.meta.dirname, 'fixtures', 'crash-writer.ts')
const KILL_AFTER = 120

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('SIGKILL mid-stream loses no acknowledged block and leaves no torn row', {
      timeout: 60_000,
    }, async () => {
      const place = tempPlace(backend)
      const sessionId = 'ses_crash'
      const child = spawn(process.execPath, ['--import', 'tsx', WRITER, sessionId], {
        env: { ...process.env, VIS_HOME: place.home, VIS_DATABASE_URL: place.databaseUrl },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stderr = ''
      child.stderr.on('data', (d) => {
        stderr += d
      })
      const exited = once(child, 'exit')
      const acked = new Map<number, string>()
      for await (const line of createInterface({ input: child.stdout })) {
        const m = /^ack (\d+) (\S+)$/.exec(line)
        if (!m) continue
        acked.set(Number(m[1]), m[2]!)
        // Killed while the writer is in the middle of its next block.
        if (acked.size === KILL_AFTER) child.kill('SIGKILL')
      }
      const [code, signal] = await exited
      assert.equal(signal, 'SIGKILL', `writer ended on its own (code ${code}): ${stderr}`)
      assert.ok(acked.size >= KILL_AFTER)

      const store = new Store(place)
      try {
        assert.deepEqual(store.integrityCheck(), ['ok'])
        if (store.sqlite) assert.deepEqual(store.sqlite.pragma('foreign_key_check'), [])

        for (const [n, id] of acked) {
          const b = store.blocks.require(id)
          assert.equal(b.status, 'done', `acked block ${n}`)
          assert.equal(b.position, n)
          assert.equal(b.stdout, expectedStdout(n))
          assert.equal(store.idempotency.lookup(sessionId, `key-${n}`), id)
          const want = expectedAttachment(n)
          const atts = store.attachments.listByBlock(id)
          assert.equal(atts.length, want ? 1 : 0, `attachments of acked block ${n}`)
          if (want) assert.deepEqual(store.attachments.read(atts[0]!.id).data, want)
        }

        // Whatever else committed is whole: a finished block has all its output and attachments,
        // a running one has none, and at most the one block in flight is running.
        const all = store.blocks.listBySession(sessionId)
        assert.deepEqual(
          all.map((b) => b.position),
          all.map((_, i) => i + 1),
        )
        let running = 0
        for (const b of all) {
          const atts = store.attachments.listByBlock(b.id)
          if (b.status === 'running') {
            running++
            assert.equal(b.stdout, '')
            assert.equal(atts.length, 0)
          } else {
            assert.equal(b.stdout, expectedStdout(b.position))
            assert.equal(atts.length, expectedAttachment(b.position) ? 1 : 0)
          }
        }
        assert.ok(running <= 1, `${running} blocks left running`)
        const lastAcked = Math.max(...acked.keys())
        const defs = store.defs.get(sessionId)?.snapshot as { lastBlock: number }
        assert.ok(defs.lastBlock >= lastAcked)

        // The event log has no holes and its counter matches.
        const { events, gap, lastSeq } = store.events.replay(sessionId, 0, 100_000)
        assert.equal(gap, false)
        assert.deepEqual(
          events.map((e) => e.seq),
          events.map((_, i) => i + 1),
        )
        assert.equal(lastSeq, events.length)
        assert.ok(events.length >= 2 * lastAcked)

        // The host's restart path: close what was running, then keep going where it stopped.
        assert.equal(store.blocks.abandonRunning(), running)
        const next = store.blocks.start({ sessionId, code: 'print("after")' }).block
        assert.equal(next.position, all.length + 1)
      } finally {
        store.close()
      }
    })
  })
}
