// A block that prints past the guest's cap: the guest cuts at its byte cap and says how much
// it dropped; the engine's stored-output cap then must not cut that note off and claim that
// only a few characters were lost.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { capText } from '../../src/engine/outcome.js'

const python = process.env.VIS_PYTHON_VERSION
const home = mkdtempSync(join(tmpdir(), 'vis-engine-cap-home-'))
process.env.VIS_HOME = home
let engine: Engine

before(async () => {
  engine = await createEngine({ home, python, pool: { size: 0 } })
})
after(async () => {
  await engine.close()
})

test('2,000,001 characters printed: what was kept and both notes add up to all of it', async () => {
  const s = await engine.createSession()
  const r = await engine.runBlock(s.id, { code: 'print("x" * 2_000_000)', timeout_ms: 60_000 })
  const out = r.block.stdout
  const m =
    /^(x*)\n\[vis: output truncated, (\d+) more characters not kept\]\n\[output truncated: (\d+) more bytes not shown \(cap (\d+) bytes per block\)\]\n$/.exec(
      out,
    )
  assert.ok(m, `stored stdout ends with both notes: ${JSON.stringify(out.slice(-200))}`)
  const [, kept, engineCut, guestCut, cap] = m
  // ASCII: bytes and characters count alike; the printed newline is one of the dropped.
  assert.equal(kept!.length + Number(engineCut) + Number(guestCut), 2_000_001)
  assert.ok(Number(guestCut) > 900_000, 'the note says most of the output was dropped')
  assert.equal(Number(cap), 1 << 20)
})

test('capText: plain text is cut with its own note; an earlier note is kept whole', () => {
  assert.equal(capText('abcdef', 10), 'abcdef')
  assert.equal(capText('abcdefghij', 4), 'abcd\n[vis: output truncated, 6 more characters not kept]\n')
  const earlier =
    '\n[output truncated by the host: 5000 more characters not shown (cap 2048 characters per block)]\n'
  const text = 'y'.repeat(200) + earlier
  const cut = capText(text, 150)
  assert.ok(cut.endsWith(earlier.slice(1)), cut)
  assert.ok(cut.startsWith(`${'y'.repeat(150 - earlier.length)}\n[vis: output truncated, `))
  // A marker-like line in the middle of the output is output, not a note.
  const inside = `${earlier}${'z'.repeat(100)}`
  assert.equal(
    capText(inside, 50),
    `${inside.slice(0, 50)}\n[vis: output truncated, ${inside.length - 50} more characters not kept]\n`,
  )
})
