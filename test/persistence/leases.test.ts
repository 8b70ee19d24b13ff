// LeasesRepo, the ownership record a cluster of nodes shares (issue 19), on both backends. Two
// Store instances on one database are two nodes; a shared fake clock lets leases expire on cue.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Store } from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'
import { BACKENDS, tempPlace } from './helpers.js'

const n1 = { id: 'n1', url: 'http://10.0.0.1:7878' }
const n2 = { id: 'n2', url: 'http://10.0.0.2:7878' }
const TTL = 10_000

for (const backend of BACKENDS) {
  describe(backend, () => {
    function twoNodes() {
      const clock = { t: 1_000_000 }
      const place = tempPlace(backend)
      const a = new Store({ ...place, now: () => clock.t })
      const b = new Store({ ...place, now: () => clock.t })
      a.sessions.create({ id: 'ses_1' })
      a.sessions.create({ id: 'ses_2' })
      const close = () => {
        a.close()
        b.close()
      }
      return { clock, a, b, close }
    }

    test('a free lease is taken; a live one is refused with its holder; an expired one is taken over', () => {
      const { clock, a, b, close } = twoNodes()
      try {
        const first = a.leases.acquire('ses_1', n1, TTL)
        assert.ok(first.acquired)
        assert.deepEqual(first.lease, {
          sessionId: 'ses_1',
          nodeId: 'n1',
          nodeUrl: n1.url,
          expiresAt: clock.t + TTL,
          acquiredAt: clock.t,
        })
        const refused = b.leases.acquire('ses_1', n2, TTL)
        assert.equal(refused.acquired, false)
        assert.equal(!refused.acquired && refused.holder.nodeUrl, n1.url)

        // The holder asking again extends it and keeps when it first got it.
        clock.t += 5_000
        const again = a.leases.acquire('ses_1', n1, TTL)
        assert.ok(again.acquired)
        assert.equal(again.lease.expiresAt, clock.t + TTL)
        assert.equal(again.lease.acquiredAt, clock.t - 5_000)

        // Just before expiry it is still n1's; at expiry n2 takes it over.
        clock.t += TTL - 1
        assert.equal(b.leases.acquire('ses_1', n2, TTL).acquired, false)
        assert.deepEqual(
          b.leases.expiredOf('n1').map((l) => l.sessionId),
          [],
        )
        clock.t += 1
        assert.deepEqual(
          b.leases.expiredOf('n1').map((l) => l.sessionId),
          ['ses_1'],
        )
        const taken = b.leases.acquire('ses_1', n2, TTL)
        assert.ok(taken.acquired)
        assert.equal(taken.lease.nodeId, 'n2')
        assert.equal(taken.lease.acquiredAt, clock.t)
        assert.equal(a.leases.holder('ses_1')?.nodeId, 'n2')
        // The old owner cannot take it back while n2's is live.
        assert.equal(a.leases.acquire('ses_1', n1, TTL).acquired, false)
      } finally {
        close()
      }
    })

    test('renew extends only what a node still holds; release is the holder’s alone', () => {
      const { clock, a, b, close } = twoNodes()
      try {
        a.leases.announce(n1)
        assert.ok(a.leases.acquire('ses_1', n1, TTL).acquired)
        assert.ok(a.leases.acquire('ses_2', n1, TTL).acquired)
        clock.t += TTL
        // n1 stalled past its TTL; n2 takes ses_2 before n1 renews.
        assert.ok(b.leases.acquire('ses_2', n2, TTL).acquired)
        clock.t += 1
        assert.deepEqual(a.leases.renew('n1', TTL), ['ses_1'])
        assert.equal(a.leases.holder('ses_1')?.expiresAt, clock.t + TTL)
        assert.equal(a.leases.holder('ses_2')?.nodeId, 'n2')
        assert.equal(a.leases.nodes()[0]?.heartbeatAt, clock.t)
        assert.deepEqual(
          a.leases.heldBy('n1').map((l) => l.sessionId),
          ['ses_1'],
        )

        assert.equal(a.leases.release('ses_2', 'n1'), false)
        assert.equal(b.leases.release('ses_2', 'n2'), true)
        assert.equal(b.leases.holder('ses_2'), undefined)
        // A released session is free for anyone at once.
        assert.ok(a.leases.acquire('ses_2', n1, TTL).acquired)
      } finally {
        close()
      }
    })

    test('nodes are announced with their start and heartbeat; leases go with their session', () => {
      const { clock, a, close } = twoNodes()
      try {
        const started = clock.t
        a.leases.announce(n1)
        clock.t += 100
        a.leases.announce({ ...n1, url: 'http://10.0.0.9:7878' }, false)
        assert.deepEqual(a.leases.nodes(), [
          { id: 'n1', url: 'http://10.0.0.9:7878', startedAt: started, heartbeatAt: clock.t },
        ])
        clock.t += 100
        a.leases.announce(n1)
        assert.equal(a.leases.nodes()[0]?.startedAt, clock.t)

        assert.ok(a.leases.acquire('ses_1', n1, TTL).acquired)
        assert.equal(a.sessions.delete('ses_1'), true)
        assert.equal(a.leases.holder('ses_1'), undefined)
      } finally {
        close()
      }
    })

    test('bad input is refused: unknown session, empty node id, silly TTL', () => {
      const { a, close } = twoNodes()
      try {
        assert.throws(
          () => a.leases.acquire('ses_nope', n1, TTL),
          (e: unknown) => isVisError(e, 'db.session-not-found'),
        )
        assert.throws(
          () => a.leases.acquire('ses_1', { id: '', url: n1.url }, TTL),
          (e: unknown) => isVisError(e, 'db.invalid-input'),
        )
        assert.throws(
          () => a.leases.acquire('ses_1', n1, 0),
          (e: unknown) => isVisError(e, 'db.invalid-input'),
        )
        assert.throws(
          () => a.leases.renew('n1', -5),
          (e: unknown) => isVisError(e, 'db.invalid-input'),
        )
        // Nothing was taken by the refused calls.
        assert.equal(a.leases.holder('ses_1'), undefined)
      } finally {
        close()
      }
    })
  })
}
