// The PostgreSQL driver's wait for a reply (src/persistence/postgres/reply-wait.ts) against a
// real worker thread that produces, deterministically, the interleavings behind the reported
// `db.connection-lost` "the PostgreSQL worker stopped without answering": a notify for the
// previous reply that arrives while the main thread already waits for the next one, and late
// replies left in the port. The old wait ("store 0, post, wait while 0, take one message") is
// run on the same interleaving first, to show the fixture really reproduces the failure.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads'
import { waitForReply } from '../../src/persistence/postgres/reply-wait.js'

const FIXTURE = new URL('./fixtures/reply-order-worker.mjs', import.meta.url)
// Generous: only the deliberate timeout (seq 4) may ever reach its limit.
const LIMIT_MS = 20_000

function startFixture(): { port: MessagePort; slot: Int32Array; worker: Worker } {
  const slots = new SharedArrayBuffer(12)
  const { port1, port2 } = new MessageChannel()
  const worker = new Worker(FIXTURE, { workerData: { port: port2, slots }, transferList: [port2] })
  return { port: port1, slot: new Int32Array(slots), worker }
}

// Request 1 is answered before the main thread waits (the fast path that skips the notify).
function sendFirst(port: MessagePort, slot: Int32Array): void {
  port.postMessage({ seq: 1 })
  Atomics.wait(slot, 1, 0, LIMIT_MS)
  assert.equal(Atomics.load(slot, 1), 1, 'the fixture answered request 1')
}

test('the old wait takes a stale wake for an answer and finds no message', async () => {
  const { port, slot, worker } = startFixture()
  try {
    sendFirst(port, slot)
    assert.notEqual(Atomics.wait(slot, 0, 0, 0), 'timed-out') // the flag is already up: no sleep
    assert.deepEqual(receiveMessageOnPort(port)?.message, { seq: 1, reply: 'answer 1' })
    Atomics.store(slot, 0, 0)
    port.postMessage({ seq: 2 })
    const waited = Atomics.wait(slot, 0, 0, LIMIT_MS)
    const msg = receiveMessageOnPort(port)
    assert.equal(waited, 'ok')
    assert.equal(msg, undefined, 'woken by the notify meant for reply 1, before reply 2 exists')
  } finally {
    await worker.terminate()
  }
})

test('waitForReply sleeps through a stale wake and skips late replies, in order', async () => {
  const { port, slot, worker } = startFixture()
  try {
    sendFirst(port, slot)
    assert.deepEqual(waitForReply(port, slot, 1, LIMIT_MS), { reply: 'answer 1' })

    port.postMessage({ seq: 2 })
    assert.deepEqual(waitForReply(port, slot, 2, LIMIT_MS), { reply: 'answer 2' })
    assert.equal(Atomics.load(slot, 2), 3, 'three stale notifies woke the waiter before reply 2')

    port.postMessage({ seq: 3 })
    assert.deepEqual(waitForReply(port, slot, 3, LIMIT_MS), { reply: 'answer 3' })

    port.postMessage({ seq: 4 })
    assert.deepEqual(waitForReply(port, slot, 4, 200), { timedOut: true, stale: 0 })

    port.postMessage({ seq: 5 })
    assert.deepEqual(waitForReply(port, slot, 5, LIMIT_MS), { reply: 'answer 5' })
    assert.equal(receiveMessageOnPort(port), undefined, 'nothing left behind')
  } finally {
    await worker.terminate()
  }
})
