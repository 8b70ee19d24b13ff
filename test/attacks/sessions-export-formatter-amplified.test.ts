// ATTACK (surface 6 and 8, the formatter and the Markdown export): the thirteenth pass found that a
// block could make its session's transcript impossible to export (a spread of 150 000 backtick
// runs overflowed the stack) and fixed that one spread. `vis sessions export` shows each block's
// code formatted by ruff (formatPythonForDisplay), bounded by its INPUT only (100 000
// characters), and ruff's output is not bounded: a literal nested 800 deep, too long for a line,
// is broken one element a line, each indented four spaces deeper, so 96 KB of such code formats
// to 92 million characters. Seven such blocks (the model writes them; they need not even run:
// CPython refuses the nesting) make the transcript longer than V8's longest string, and the export
// fails ("Invalid string length"); the session's every other block can no longer be exported as
// Markdown, which is where a person reviews what the session did.
// Here: a session runs a block with a marker, then seven such blocks (distinct names); `vis
// sessions export` must still write the transcript. Both directions: the JSON export works.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const visBin = resolve(import.meta.dirname, '../../bin/vis.js')

const nested = (name: string, depth: number) => `${name} = ${'[a, '.repeat(depth)}1${']'.repeat(depth)}\n`

test("blocks whose formatted code is huge do not make their session's Markdown export fail", async () => {
  const base = mkdtempSync(join(tmpdir(), 'vis-attack-export-fmt-'))
  const home = join(base, 'home')
  const R = join(base, 'R')
  mkdirSync(home)
  mkdirSync(R)
  let engine: Engine | undefined
  try {
    const eng = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
    engine = eng
    const s = await eng.createSession({ roots: [R] })
    const first = await eng.runBlock(s.id, { code: "print('EARLIER-' + 'BLOCK-OUTPUT')" })
    assert.equal(first.block.stdout, 'EARLIER-BLOCK-OUTPUT\n')
    for (let b = 0; b < 7; b++) {
      const code = Array.from({ length: 24 }, (_, i) => nested(`v${b}_${i}`, 800)).join('')
      assert.ok(code.length < 100_000)
      const r = await eng.runBlock(s.id, { code })
      assert.equal(r.block.status, 'done')
    }
    await engine.close()
    engine = undefined
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [visBin, 'sessions', 'export', s.id, ...args], {
        env: { ...process.env, VIS_HOME: home },
        encoding: 'utf8',
        timeout: 300_000,
      })
    // Allowed: the JSON export (code as written) works.
    const json = cli('--format', 'json', '-o', join(base, 'export.json'))
    assert.equal(json.status, 0, json.stderr)
    const file = join(base, 'export.md')
    const md = cli('-o', file)
    assert.equal(md.status, 0, `vis sessions export (Markdown) failed: ${md.stderr.slice(0, 400)}`)
    assert.match(readFileSync(file, 'utf8'), /EARLIER-BLOCK-OUTPUT/)
  } finally {
    await engine?.close()
    rmSync(base, { recursive: true, force: true })
  }
})
