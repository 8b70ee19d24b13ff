// Nothing can type into a block the engine runs (HTTP, MCP and agent turns have no stdin
// route), so input() and sys.stdin end at once with an error that says why, instead of
// waiting out the block's timeout. The library's own stdin (Session.writeStdin, runBlock's
// `stdin`) is proven in test/sessions/stdin-network.test.ts.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'

const python = process.env.VIS_PYTHON_VERSION
const home = mkdtempSync(join(tmpdir(), 'vis-engine-stdin-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-engine-stdin-root-'))
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
