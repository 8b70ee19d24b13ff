// ATTACK (surface 2, the formatter; "it is one serial chain server-wide"): the thirteenth pass
// moved ruff off the event loop into one formatter thread, one code at a time, each bounded to 2 s
// of formatting (past it the thread is terminated and a fresh one loads ruff again), and remembers
// every outcome by content "so the same hostile block never costs it twice". But nothing bounds
// how many DIFFERENT codes wait in the chain, or whose: `formatOffThread` appends every request
// to one FIFO promise chain shared by every session and client of the server. A block whose code
// is `x = a()()()…` (30 000 call trailers, 60 KB) takes ruff far longer than 2 s, and the next one
// differs by a comment, so each costs the full bound plus a thread restart. The session page
// fetches `GET …/blocks/{id}?format=display` for every block.finished it sees (web/blocks.js
// fetchBlock, not awaited one by one), so a model that runs a few dozen such blocks while its page
// is open queues minutes of formatting, and every OTHER session's page (its session view and each
// of its blocks, `?format=display`) waits behind all of it: one session starves the code display
// of the whole server.
// Here: session A runs HOSTILE blocks of that shape; their display is asked for at once (as the
// page does); once the first of them is answered (the rest are queued by then), session B's
// ordinary block is asked for. On the current code B's answer comes only after every one of A's:
// nothing of A is still pending when B is answered.
// Both directions: B's code is formatted (`code_display` differs from the code as written).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { homeServer } from './fixtures/home-server.js'

const HOSTILE = 5

test("one session's hostile blocks do not queue every other session's code display behind them", async () => {
  const { call, close } = await homeServer('vis-attack-fmt-queue-home-')
  try {
    const a = await call('POST', '/v1/sessions', {})
    assert.equal(a.status, 201, a.text)
    const b = await call('POST', '/v1/sessions', {})
    assert.equal(b.status, 201, b.text)
    const hostileIds: string[] = []
    for (let i = 0; i < HOSTILE; i++) {
      const code = `x = a${'()'.repeat(30_000)}  # ${i}`
      const r = await call('POST', `/v1/sessions/${a.body.id}/blocks`, { code })
      assert.equal(r.status, 200, r.text.slice(0, 300))
      hostileIds.push(r.body.id)
    }
    const plain = await call('POST', `/v1/sessions/${b.body.id}/blocks`, { code: 'y  =  [1,2 ,3]' })
    assert.equal(plain.status, 200, plain.text)

    // A's page asks for each of its blocks at once.
    let pending = HOSTILE
    let firstDone: () => void = () => {}
    const first = new Promise<void>((r) => {
      firstDone = r
    })
    const hostile = hostileIds.map((id) =>
      call('GET', `/v1/sessions/${a.body.id}/blocks/${id}?format=display`).then((r) => {
        pending--
        firstDone()
        return r
      }),
    )
    await first
    // Every other request of A has been in the server since long before: B asks now.
    const viewB = await call('GET', `/v1/sessions/${b.body.id}/blocks/${plain.body.id}?format=display`)
    const stillPending = pending
    const answers = await Promise.all(hostile)
    for (const r of answers) assert.equal(r.status, 200, r.text.slice(0, 300))
    // Allowed: B's ordinary code is formatted.
    assert.equal(viewB.status, 200, viewB.text)
    assert.equal(viewB.body.code_display, 'y = [1, 2, 3]\n', viewB.text)
    assert.ok(
      stillPending > 0,
      `session B's code display was answered only after all ${HOSTILE} of session A's hostile blocks had been ` +
        `formatted (each up to the 2 s bound plus a formatter thread restart): one session's blocks queue ` +
        `every other session's display behind them`,
    )
  } finally {
    await close()
  }
})
