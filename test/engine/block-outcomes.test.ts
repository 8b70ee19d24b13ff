// What an engine block (HTTP, MCP, agent turns) hands back in two cases models hit:
// - input(): nothing can type into an engine block (no route writes stdin), so input() and
//   sys.stdin end at once with an error that says why, instead of waiting out the block's
//   timeout. The library's own stdin (Session.writeStdin, runBlock's `stdin`) is proven in
//   test/sessions/stdin-network.test.ts.
// - output past the caps: the guest cuts at its byte cap and says how much it dropped; the
//   engine's stored-output cap must not cut that note off and claim only a few characters
//   were lost.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { capText } from '../../src/engine/block-finish.js'
import { createEngine, type Engine } from '../../src/engine/index.js'

const python = process.env.VIS_PYTHON_VERSION
const home = mkdtempSync(join(tmpdir(), 'vis-engine-outcomes-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-engine-outcomes-root-'))
process.env.VIS_HOME = home
let engine: Engine

before(async () => {
  engine = await createEngine({ home, python, pool: { size: 0 } })
})
after(async () => {
  await engine.close()
})

test('input() in an engine block is EOFError at once, with a hint, and the session goes on', async () => {
  const s = await engine.createSession({ roots: [root] })
  // A long timeout: without the fix the block would sit in input() until it, and time out.
  const r = await engine.runBlock(s.id, {
    code: 'x = 1\nname = input("name? ")\nprint(name)',
    timeout_ms: 60_000,
  })
  const block = r.block
  // The view's error schema names code and message; the guest's fields ride along.
  const error = block.error as { message: string; phase?: string; line?: number; flags?: string[] } | null
  assert.equal(block.timed_out, false, JSON.stringify(block))
  assert.equal(error?.phase, 'runtime')
  assert.ok(error?.flags?.includes('no-stdin'))
  assert.match(error?.message ?? '', /^EOFError: EOF when reading a line/)
  assert.match(error?.message ?? '', /hint: nothing is typed into this block/)
  assert.equal(error?.line, 2)
  assert.equal(block.stdout, 'name? ', 'the prompt was printed, as python3 prints it')
  // sys.stdin reads as empty, and a caught EOFError lets the block finish normally.
  const next = await engine.runBlock(s.id, {
    code: 'import sys\ntry:\n    input()\nexcept EOFError:\n    print("no input")\nprint(repr(sys.stdin.read()), x)',
    timeout_ms: 60_000,
  })
  assert.equal(next.block.error, null, JSON.stringify(next.block.error))
  assert.equal(next.block.stdout, "no input\n'' 1\n")
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
