// ATTACK (surface 2, drafts: draft_diff / GET …/draft/diff / vis sessions export): the host
// renders a draft's diff with Myers' algorithm keeping a copy of the whole frontier for every
// edit step (src/drafts/unified.ts `trace.push(v.slice())`): memory (N+M)·D·4 bytes, quadratic
// in the number of changed lines. The only bound is 2 MiB of text per file. A block in a draft
// rewrites a 6 KB file of 3000 one-character lines ('a' -> 'b'): rendering that diff costs the
// HOST process ~280 MiB; a 40 KB file costs ~12.8 GiB and a 2 MiB one (the allowed maximum)
// ~TiB: the host's memory is exhausted and the vis server (every session) dies. The guest
// triggers it itself with `draft_diff()`; the real file and the draft's are both tiny.
// On the current code the host's peak RSS grows by > 200 MiB for this 6 KB change.
// Fixed: past a bounded number of edit steps the file is shown as a whole replacement, which
// is still a correct diff (checked here with `git apply`); small edits stay minimal.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { unifiedHunks } from '../../src/drafts/unified.js'
import { createEngine } from '../../src/engine/index.js'
import { newHome, newRepo, python } from '../drafts/helpers.js'

const peakMiB = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) >> 10

test("a draft's diff of a small file costs the host memory proportional to the file, not its square", async () => {
  const home = newHome()
  const root = newRepo()
  const LINES = 3000
  writeFileSync(join(root, 'lines.txt'), 'a\n'.repeat(LINES))
  const e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await e.createSession({ roots: [root] })
    await e.drafts.create(s.id, 'rewrite')
    const r = await e.runBlock(s.id, {
      code: `open(${JSON.stringify(join(root, 'lines.txt'))}, 'w').write('b\\n' * ${LINES})`,
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    const before = peakMiB()
    const t0 = performance.now()
    const diff = await e.drafts.diff(s.id)
    const ms = Math.round(performance.now() - t0)
    const grew = peakMiB() - before
    assert.ok(JSON.stringify(diff).includes('lines.txt'))
    assert.ok(
      grew < 64,
      `diffing a ${2 * LINES}-byte file grew the host's peak RSS by ${grew} MiB (${ms} ms); ` +
        'the cost is quadratic in changed lines, so a 40 KB file needs ~12.8 GiB',
    )
    // Still a correct diff: the whole file replaced, and git applies it to the real root.
    const section = diff.diff.split(/(?=^diff --git )/m).find((p) => p.startsWith('diff --git a/lines.txt '))
    assert.ok(section, diff.diff.slice(0, 500))
    assert.ok(
      section.includes(`@@ -1,${LINES} +1,${LINES} @@\n${'-a\n'.repeat(LINES)}${'+b\n'.repeat(LINES)}`),
    )
    execFileSync('git', ['apply', '-'], { cwd: root, input: section })
    assert.equal(readFileSync(join(root, 'lines.txt'), 'utf8'), 'b\n'.repeat(LINES))
  } finally {
    await e.close()
  }
})

test('diffs under the bound stay minimal; past it the replacement keeps the missing-newline marker', () => {
  const old = Array.from({ length: 3000 }, (_, i) => `line ${i}\n`).join('')
  const edited = old.replace('line 1500\n', 'changed\n')
  assert.equal(
    unifiedHunks(old, edited),
    '@@ -1498,7 +1498,7 @@\n line 1497\n line 1498\n line 1499\n-line 1500\n+changed\n line 1501\n line 1502\n line 1503\n',
  )
  const big = unifiedHunks('x\n'.repeat(2500), 'y\n'.repeat(2500).slice(0, -1))
  assert.ok(big.startsWith('@@ -1,2500 +1,2500 @@\n-x\n'))
  assert.ok(big.endsWith('+y\n+y\n\\ No newline at end of file\n'))
})
