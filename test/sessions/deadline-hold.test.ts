// BlockDeadline's holds, on its own with real timers: a hold stops the timeout and the wall
// clock, the clocks go on with the time they had left, and holds stand still for at most
// maxHoldMs in all, so a guest chaining approval requests cannot outrun every deadline.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { BlockDeadline } from '../../src/sessions/deadline.js'

function deadline(opts: { timeoutMs: number; wallClockMs?: number; maxHoldMs?: number }) {
  const seen: { interruptedAt?: number; killedAt?: number; why?: string } = {}
  const t0 = performance.now()
  const d = new BlockDeadline(
    {
      interrupt: async () => {
        seen.interruptedAt ??= performance.now() - t0
      },
      kill: (why) => {
        seen.killedAt ??= performance.now() - t0
        seen.why = why
      },
    },
    { graceMs: 50, wallClockMs: opts.wallClockMs ?? 60_000, ...opts },
  )
  return { d, seen, t0 }
}

const until = async (cond: () => boolean, ms = 10_000) => {
  const t0 = Date.now()
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 5))
  }
}

test('a hold stops the timeout; released, the block has the time it had left', async () => {
  const { d, seen } = deadline({ timeoutMs: 150 })
  const release = d.hold()
  // Held far past the timeout: nothing fires.
  await new Promise((r) => setTimeout(r, 400))
  assert.equal(seen.interruptedAt, undefined)
  release()
  await until(() => seen.interruptedAt !== undefined)
  assert.ok(seen.interruptedAt! >= 400 + 100, `interrupted at ${seen.interruptedAt} ms`)
  await until(() => seen.killedAt !== undefined)
  d.clear()
})

test('holds stand still for at most maxHoldMs in all, however they are chained', async () => {
  const { d, seen } = deadline({ timeoutMs: 100, wallClockMs: 200, maxHoldMs: 300 })
  // A guest asking for one approval after another keeps a hold out the whole time.
  let release = d.hold()
  const chain = setInterval(() => {
    const next = d.hold()
    release()
    release = next
  }, 20)
  await until(() => seen.interruptedAt !== undefined)
  clearInterval(chain)
  release()
  // The timeout fired once the cap was spent: after 100 ms of its own and 300 ms held.
  assert.ok(seen.interruptedAt! >= 380, `interrupted at ${seen.interruptedAt} ms`)
  await until(() => seen.killedAt !== undefined)
  d.clear()
})

test('a hold taken after the block was killed changes nothing', () => {
  const { d, seen } = deadline({ timeoutMs: 60_000 })
  d.kill('test')
  const release = d.hold()
  release()
  release()
  assert.equal(seen.why, 'test')
  d.clear()
})
