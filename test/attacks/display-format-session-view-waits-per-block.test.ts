// ATTACK (surface 2, the formatter): the fifteenth pass made the formatter thread serve one queue
// per session in turn, "so one caller's queue of slow codes costs another one call of it"
// (src/format/format-pool.ts; SECURITY.md, display formatter: "sessions take turns for it ... so
// one session's slow codes do not hold up another's"). But the session view's `?format=display`
// (GET /v1/sessions/{id}?format=display, what the page loads for a session) formats its blocks one
// after another (src/http/block-route.ts addCodeDisplay: `for (const b of blocks) await ...`):
// each of its codes joins the session's queue only when the one before it is done, so each waits
// a whole new round behind the hostile session's next slow code. One view of K blocks costs K of
// the other session's slow calls (each up to the 2 s bound plus a thread restart), not one; with
// the default 50 blocks a view waits 50 rounds, and with several hostile sessions each of the 50
// waits up to the 15 s queue bound (12 minutes for one page load).
// Here: session A keeps two `?format=display` requests for distinct hostile blocks (`a()()()…`,
// 60 KB, each far past the 2 s bound) in flight, as its open page does for each block.finished.
// Once the first is answered, session B's view of K ordinary blocks is asked for. Counted: how many
// of A's slow calls are answered while B's one view waits. Served as one turn (the fair share the
// pass promised), B's view waits for the call in flight and at most one more of A's; on the current
// code it waits about 2K of them (12 of 6 blocks seen).
// Both directions: B's blocks all come back formatted.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { homeServer } from './fixtures/home-server.js'

const K = 6
const HOSTILE = 24

test("a session view's display waits one turn, not one turn per block, behind another session's slow codes", async () => {
  const { call, close } = await homeServer('vis-attack-fmt-view-home-')
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
    for (let i = 0; i < K; i++) {
      const r = await call('POST', `/v1/sessions/${b.body.id}/blocks`, { code: `y${i}  =  [1,2 ,${i}]` })
      assert.equal(r.status, 200, r.text)
    }

    // A's page: two block displays in flight at all times, a new one as each is answered.
    let next = 0
    let answered = 0
    let refill = true
    let firstAnswered: () => void = () => {}
    const first = new Promise<void>((r) => {
      firstAnswered = r
    })
    const inFlight = new Set<Promise<void>>()
    const ask = (): void => {
      if (!refill || next >= hostileIds.length) return
      const id = hostileIds[next++]!
      const p: Promise<void> = call('GET', `/v1/sessions/${a.body.id}/blocks/${id}?format=display`).then(
        (r) => {
          assert.equal(r.status, 200, r.text.slice(0, 300))
          answered++
          inFlight.delete(p)
          firstAnswered()
          ask()
        },
      )
      inFlight.add(p)
    }
    ask()
    ask()
    await first

    const before = answered
    const view = await call('GET', `/v1/sessions/${b.body.id}?format=display`)
    const during = answered - before
    refill = false
    while (inFlight.size > 0) await Promise.all([...inFlight])

    assert.equal(view.status, 200, view.text.slice(0, 300))
    assert.ok(
      during <= 2,
      `session B's one view (${K} blocks, ?format=display) waited while ${during} of session A's slow ` +
        `codes were formatted (each up to the 2 s bound plus a formatter thread restart): the view's codes ` +
        `queue one at a time, so one session's slow codes cost another session's view one turn per block`,
    )
    // Allowed: B's view is whole and every block of it formatted.
    const blocks = view.body.blocks as Array<{ code: string; code_display?: string }>
    assert.equal(blocks.length, K)
    for (const blk of blocks) assert.notEqual(blk.code_display, blk.code, `formatted: ${JSON.stringify(blk)}`)
  } finally {
    await close()
  }
})
