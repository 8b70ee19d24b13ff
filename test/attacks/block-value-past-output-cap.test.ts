// Attack (seventh outsider pass; SECURITY.md Resource limits, "output | 1 MiB per block | the guest
// capture and the host's OutputBudget | truncated with a marker"): the cap covers what a block PRINTS,
// not what it RETURNS. A block's `result` (its last expression), its `value` (a block that printed and
// ends in an expression) and its `error` (an exception's message, with its chain) reach the host whole,
// up to the wire's 16 MiB frame, and are stored in the block's row, sent in its `block.finished` event
// to every event-stream listener and handed to the model or MCP client.
//
// `'x' * 12_000_000` as a block's last line stores 12 MB; `raise ValueError('y' * 12_000_000)` the
// same in `error.message`; `sys.stdout.write('z' * 12_000_000)` is cut at 1 MiB as promised. So the
// per-block bound on what a sandbox makes the host keep is the 16 MiB frame, not the stated 1 MiB.
//
// Reproduction: a real engine session runs the three blocks; the test reads the stored block views.
// It fails on the current code because result, value and error each keep ~12 MB (a fix: cap them with
// the same OutputBudget and marker, on the host).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

const CAP = 1 << 20
const size = (v: unknown) => (v === null || v === undefined ? 0 : JSON.stringify(v).length)

test("a block's result, value and error are held to the output cap", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-value-cap-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-value-cap-root-'))
  made.push(home, root)
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root] })
    const printed = await engine.runBlock(s.id, { code: "import sys\nsys.stdout.write('z' * 12_000_000)" })
    assert.ok(size(printed.block.stdout) < CAP + 4096, 'printed output is cut at the cap')
    const result = await engine.runBlock(s.id, { code: "'x' * 12_000_000" })
    const value = await engine.runBlock(s.id, { code: "print('a')\n'x' * 12_000_000" })
    const error = await engine.runBlock(s.id, { code: "raise ValueError('y' * 12_000_000)" })
    const kept = {
      result: size(result.block.result),
      value: size((value.block as { value?: unknown }).value),
      error: size(error.block.error),
    }
    assert.ok(
      kept.result < CAP + 4096 && kept.value < CAP + 4096 && kept.error < CAP + 4096,
      `the host kept ${JSON.stringify(kept)} characters of one block's result/value/error, past the 1 MiB output cap`,
    )
  } finally {
    await engine.close()
  }
})
