// The host-wide bound on patch's Python syntax checkers (src/tools/fs/check-slots.ts): never more
// than `size` at once, a bounded queue, a bounded wait; the attack it answers is
// test/attacks/patch-syntax-check-concurrent-memory.test.ts.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Slots } from '../../src/tools/fs/check-slots.js'

// A piece of work that runs until released, recording how many ran at once.
function gate() {
  let release!: () => void
  const done = new Promise<void>((r) => {
    release = r
  })
  return { done, release }
}

test('no more than `size` run at once; waiters start in order as slots free', async () => {
  const slots = new Slots(2, 10, 60_000)
  let now = 0
  let peak = 0
  const order: number[] = []
  const gates = Array.from({ length: 6 }, gate)
  const runs = gates.map((g, i) =>
    slots.run(
      async () => {
        now++
        peak = Math.max(peak, now)
        order.push(i)
        await g.done
        now--
        return i
      },
      () => -1,
    ),
  )
  await new Promise((r) => setImmediate(r))
  assert.equal(slots.running, 2)
  assert.equal(slots.queued, 4)
  for (const g of gates) {
    g.release()
    await new Promise((r) => setImmediate(r))
  }
  assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3, 4, 5])
  assert.equal(peak, 2)
  assert.deepEqual(order, [0, 1, 2, 3, 4, 5])
  assert.equal(slots.running, 0)
})

test('a full queue answers busy at once; a wait past the bound answers busy and frees its place', async () => {
  const slots = new Slots(1, 1, 50)
  const g = gate()
  const first = slots.run(
    () => g.done.then(() => 'ran'),
    (why) => why,
  )
  const second = slots.run(
    async () => 'ran',
    (why) => why,
  )
  assert.equal(
    await slots.run(
      async () => 'ran',
      (why) => why,
    ),
    'full',
  )
  assert.equal(await second, 'timeout')
  assert.equal(slots.queued, 0)
  g.release()
  assert.equal(await first, 'ran')
  // What was refused never ran, and the slot is free again.
  assert.equal(
    await slots.run(
      async () => 'ran',
      (why) => why,
    ),
    'ran',
  )
  assert.equal(slots.running, 0)
})
