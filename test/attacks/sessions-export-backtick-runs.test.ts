// ATTACK (surface 3, exports): the Markdown export (`vis sessions export`, and the transcript
// resource `vis mcp` and `/mcp` serve) puts each block's output in a fence "longer than any
// backtick run inside" (src/persistence/markdown.ts fence/codeSpan), finding the longest run with
// `Math.max(0, ...runs)`: one argument per run. A block that prints 150 000 runs ("`a" repeated,
// 300 KB, well under the 1 MiB output cap) makes that spread overflow the stack: the whole
// export fails with "Maximum call stack size exceeded". A model can thus make its session's
// transcript, every other block of it included, impossible to export or read as a resource, which
// is where a person reviews what it did.
// Here: a session runs a block with a marker, then one printing 150 000 backtick runs; `vis
// sessions export` must still write the transcript. On the current code it exits non-zero.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const visBin = resolve(import.meta.dirname, '../../bin/vis.js')

test('a block printing many backtick runs does not make its session unexportable', async () => {
  const base = mkdtempSync(join(tmpdir(), 'vis-attack-export-ticks-'))
  const home = join(base, 'home')
  const R = join(base, 'R')
  mkdirSync(home)
  mkdirSync(R)
  let engine: Engine | undefined
  try {
    engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
    const s = await engine.createSession({ roots: [R] })
    const first = await engine.runBlock(s.id, { code: "print('EARLIER-' + 'BLOCK-OUTPUT')" })
    assert.equal(first.block.stdout, 'EARLIER-BLOCK-OUTPUT\n')
    const r = await engine.runBlock(s.id, { code: "print('`a' * 150_000)" })
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    await engine.close()
    engine = undefined
    const file = join(base, 'export.md')
    const out = spawnSync(process.execPath, [visBin, 'sessions', 'export', s.id, '-o', file], {
      env: { ...process.env, VIS_HOME: home },
      encoding: 'utf8',
      timeout: 120_000,
    })
    assert.equal(out.status, 0, `vis sessions export failed: ${out.stderr.slice(0, 400)}`)
    assert.match(readFileSync(file, 'utf8'), /EARLIER-BLOCK-OUTPUT/)
  } finally {
    await engine?.close()
    rmSync(base, { recursive: true, force: true })
  }
})
