// The event log inside a caller's transaction (src/engine/event-log.ts): in an atomic one (a
// block's finish, which then opens no savepoint for it) a failed append aborts the caller's
// transaction instead of being dropped; in any other transaction, or alone, it is dropped as
// before (a savepoint undoes it, the rest commits). Listeners run with savepoints again.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { EventLog } from '../../src/engine/event-log.js'
import { Store } from '../../src/persistence/index.js'

function openStore(): Store {
  const store = new Store({ home: mkdtempSync(join(tmpdir(), 'vis-event-log-tx-')), databaseUrl: '' })
  after(() => store.close())
  return store
}

test('alone or in a default transaction a failed append is dropped; the rest commits', () => {
  const store = openStore()
  const log = new EventLog(store)
  assert.equal(log.append('ses_missing', 'session.closed', null), undefined)
  store.transaction(() => {
    store.sessions.create({ id: 'kept' })
    assert.equal(log.append('ses_missing', 'session.closed', null), undefined)
  })
  assert.ok(store.sessions.get('kept'))
})

test('in an atomic transaction a failed append aborts the whole transaction with its error', () => {
  const store = openStore()
  const log = new EventLog(store)
  const s = store.sessions.create()
  assert.throws(
    () =>
      store.transaction(
        () => {
          store.sessions.create({ id: 'rolled-back' })
          log.append(s.id, 'output', { n: 1 })
          log.append('ses_missing', 'session.closed', null)
        },
        { nested: 'atomic' },
      ),
    (e: unknown) => (e as { code?: string }).code === 'db.session-not-found',
  )
  assert.equal(store.sessions.get('rolled-back'), undefined)
  assert.equal(store.events.lastSeq(s.id), 0)
  // What succeeds commits with the caller, flat, and is announced.
  const seen: number[] = []
  log.subscribe(s.id, (ev) => seen.push(ev.id))
  store.transaction(() => log.append(s.id, 'output', { n: 2 }), { nested: 'atomic' })
  assert.deepEqual(seen, [1])
  assert.equal(store.events.lastSeq(s.id), 1)
})

test('a listener that catches its own failed transaction does not abort the atomic caller', () => {
  const store = openStore()
  const log = new EventLog(store)
  const s = store.sessions.create()
  log.subscribe(s.id, () => {
    try {
      store.transaction(() => {
        store.sessions.create({ id: 'listener-write' })
        throw new Error('listener failed')
      })
    } catch {}
  })
  store.transaction(
    () => {
      store.sessions.create({ id: 'caller-write' })
      log.append(s.id, 'output', { n: 1 })
    },
    { nested: 'atomic' },
  )
  assert.ok(store.sessions.get('caller-write'))
  assert.equal(store.sessions.get('listener-write'), undefined)
  assert.equal(store.events.lastSeq(s.id), 1)
})
