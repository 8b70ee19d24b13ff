// Several processes ("nodes") on one database at once: the guarantees of issue 19 hold under a
// real race, not just in sequence. Each node is a child process (fixtures/node-race.ts); all of
// them are released together once every one has loaded.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Store } from '../../src/persistence/index.js'
import { PgDatabase } from '../../src/persistence/postgres/database.js'
import { BACKENDS, type Backend, tempPlace } from './helpers.js'
import { type Place, race } from './race.js'

function seeded(backend: Backend, sessions: string[]): Place {
  const place = tempPlace(backend)
  const store = new Store(place)
  for (const id of sessions) store.sessions.create({ id })
  store.close()
  return place
}

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('three nodes racing for the same sessions: exactly one wins each lease', {
      timeout: 120_000,
    }, async () => {
      const sessions = ['ses_a', 'ses_b', 'ses_c', 'ses_d', 'ses_e']
      const place = seeded(backend, sessions)
      const nodes = ['n1', 'n2', 'n3']
      const results = (await race(
        place,
        nodes.map((n) => ['acquire', sessions.join(','), n]),
      )) as { session: string; won: boolean; holder?: string }[][]
      const store = new Store(place)
      try {
        for (const [i, id] of sessions.entries()) {
          const outcomes = results.map((r) => r[i]!)
          const winners = nodes.filter((_, k) => outcomes[k]!.won)
          assert.equal(winners.length, 1, `${id}: ${JSON.stringify(outcomes)}`)
          // The losers were told who holds it, and the table agrees.
          for (const o of outcomes) if (!o.won) assert.equal(o.holder, winners[0])
          assert.equal(store.leases.holder(id)?.nodeId, winners[0])
        }
      } finally {
        store.close()
      }
    })

    test('idempotency keys sent to three nodes at once start one block each', {
      timeout: 120_000,
    }, async () => {
      const place = seeded(backend, ['ses_retry'])
      const keys = 10
      const results = (await race(
        place,
        [1, 2, 3].map(() => ['start', 'ses_retry', String(keys)]),
      )) as { blockId: string; replayed: boolean }[][]
      for (let k = 0; k < keys; k++) {
        const outcomes = results.map((r) => r[k]!)
        assert.equal(new Set(outcomes.map((o) => o.blockId)).size, 1, `key-${k}: ${JSON.stringify(outcomes)}`)
        assert.equal(outcomes.filter((o) => !o.replayed).length, 1, `key-${k}`)
      }
      const store = new Store(place)
      try {
        const blocks = store.blocks.listBySession('ses_retry')
        assert.equal(blocks.length, keys)
        assert.deepEqual(
          blocks.map((b) => b.position),
          blocks.map((_, i) => i + 1),
        )
      } finally {
        store.close()
      }
    })

    test('two nodes appending to one session leave no gap and no duplicate in its event log', {
      timeout: 120_000,
    }, async () => {
      const place = seeded(backend, ['ses_log'])
      const per = 150
      const results = (await race(place, [
        ['events', 'ses_log', String(per)],
        ['events', 'ses_log', String(per)],
      ])) as { seqs: number[] }[]
      for (const r of results) {
        assert.equal(r.seqs.length, per)
        // Each writer's own seqs increase: a seq is taken in commit order.
        assert.ok(r.seqs.every((s, i) => i === 0 || s > r.seqs[i - 1]!))
      }
      const all = results.flatMap((r) => r.seqs).sort((a, b) => a - b)
      assert.deepEqual(
        all,
        all.map((_, i) => i + 1),
      )
      const store = new Store(place)
      try {
        const replay = store.events.replay('ses_log', 0, 10_000)
        assert.equal(replay.gap, false)
        assert.equal(replay.lastSeq, 2 * per)
        assert.deepEqual(
          replay.events.map((e) => e.seq),
          all,
        )
      } finally {
        store.close()
      }
    })
  })
}

// The worst interleaving, forced: a transaction elsewhere holds the session's row, so all three
// nodes are stopped mid-start at the same point and released together. Without the session row
// lock in BlocksRepo.start they would all have looked the key up (absent) and picked the same
// position before stopping, and two would fail; with it they queue before the lookup and the
// later ones find the first one's block.
test('postgres: starts released together after a held session row still start one block', {
  timeout: 120_000,
}, async () => {
  const place = seeded('postgres', ['ses_held'])
  const admin = new PgDatabase(place.databaseUrl)
  const watcher = new PgDatabase(place.databaseUrl)
  try {
    admin.exec("BEGIN; SELECT 1 FROM sessions WHERE id = 'ses_held' FOR UPDATE")
    const racing = race(
      place,
      [1, 2, 3].map(() => ['start', 'ses_held', '1']),
    )
    // Asked outside the admin's transaction: pg_stat_activity is a snapshot per transaction.
    const waiting = () =>
      watcher
        .prepare(
          "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
        )
        .pluck()
        .get() as number
    for (let i = 0; waiting() < 3; i++) {
      assert.ok(i < 1200, 'the three nodes to wait on the held row')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    admin.exec('COMMIT')
    const results = (await racing) as { blockId: string; replayed: boolean }[][]
    const outcomes = results.map((r) => r[0]!)
    assert.equal(new Set(outcomes.map((o) => o.blockId)).size, 1, JSON.stringify(outcomes))
    assert.equal(outcomes.filter((o) => !o.replayed).length, 1)
  } finally {
    admin.close()
    watcher.close()
  }
})
