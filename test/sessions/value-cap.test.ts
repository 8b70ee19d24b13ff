import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { capError, capValue } from '../../src/sessions/value-cap.js'

// A block's result, value and error are held to the block's output cap on the host
// (src/sessions/value-cap.ts), through a real session with a small cap: what fits is handed on
// unchanged, what does not becomes a typed marker (result, value) or is cut with a marker (error).
const OUTPUT_BYTES = 65536
const CAP = OUTPUT_BYTES + 1024 // the host's cap in characters (OutputBudget's slack included)
let rt: Runtime
let s: Session
const dirs: string[] = []

before(async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-value-cap-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-value-cap-root-'))
  dirs.push(home, root)
  process.env.VIS_HOME = home
  rt = await createRuntime({ python: process.env.VIS_PYTHON_VERSION, pool: { size: 0 }, defaultTools: false })
  s = await rt.createSession({ roots: [root], limits: { outputBytes: OUTPUT_BYTES, wallClockMs: 60_000 } })
})
after(async () => {
  await rt.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const jsonSize = (v: unknown) => JSON.stringify(v)?.length ?? 0

test('results, values and errors under the cap are unchanged', async () => {
  const nested = await s.runBlock("{'a': [1, 2.5, None, True], 'b': 'x' * 60000, 'c': {'d': 'é\\u202e'}}")
  assert.deepEqual(nested.result, { a: [1, 2.5, null, true], b: 'x'.repeat(60000), c: { d: 'é\u202e' } })
  const value = await s.runBlock("print('hi')\n['y' * 1000] * 60")
  assert.equal(value.stdout, 'hi\n')
  assert.deepEqual((value as { value?: unknown }).value, Array(60).fill('y'.repeat(1000)))
  const err = await s.runBlock("raise ValueError('z' * 50000)")
  assert.equal(err.error?.phase, 'runtime')
  assert.match(err.error?.message ?? '', /^ValueError: z{50000}$/m)
  assert.doesNotMatch(err.error?.message ?? '', /truncated by the host/)
  assert.equal((await s.runBlock('6 * 7')).result, 42)
})

test('a result past the cap becomes a typed marker with its original size', async () => {
  const r = await s.runBlock("'x' * 500_000")
  const m = r.result as Record<string, unknown>
  assert.equal(m.vis_truncated, true)
  assert.equal(m.type, 'string')
  assert.equal(m.chars, 500_002, 'the JSON text of the value the block returned')
  assert.equal(m.cap, CAP)
  assert.match(String(m.preview), /^x+$/)
  assert.ok(jsonSize(r.result) <= CAP, `${jsonSize(r.result)} characters kept`)

  const list = await s.runBlock('list(range(100_000))')
  const l = list.result as Record<string, unknown>
  assert.equal(l.type, 'array')
  assert.equal(l.chars, JSON.stringify(Array.from({ length: 100_000 }, (_, i) => i)).length)
  assert.match(String(l.preview), /^\[0,1,2,3,/)

  const printed = await s.runBlock("print('first')\n{'k': 'v' * 200_000}")
  const v = (printed as { value?: Record<string, unknown> }).value
  assert.equal(printed.stdout, 'first\n')
  assert.equal(v?.type, 'object')
  assert.equal(v?.vis_truncated, true)
  assert.equal(s.state, 'ready', 'the session goes on')
})

test('an error past the cap keeps its phase and the start of its message, cut with a marker', async () => {
  const r = await s.runBlock("raise ValueError('y' * 400_000)")
  const e = r.error
  assert.equal(e?.phase, 'runtime')
  assert.match(e?.message ?? '', /^ValueError: y+/)
  assert.match(e?.message ?? '', /\[truncated by the host: \d+ characters in all \(cap 66560 characters\)\]$/)
  assert.ok(jsonSize(e) <= CAP + 400, `${jsonSize(e)} characters kept`)
})

// Guest code that writes raw frames can shape the error freely (the schema keeps unknown keys):
// a huge phase, many extra keys each just under the cap. The host's cut still bounds it.
test('a forged error with a huge phase and many large extra keys is held to the cap', () => {
  const forged: Record<string, unknown> = { phase: 'p'.repeat(200_000), message: 'm'.repeat(200_000) }
  for (let i = 0; i < 500; i++) forged[`k${i}`] = { blob: 'b'.repeat(60_000) }
  const e = capError(forged as never, CAP)
  assert.ok(jsonSize(e) <= CAP + 400, `${jsonSize(e)} characters kept`)
  assert.match(e.phase, /^p+\n\[truncated by the host: 200000 characters in all/)
  assert.match(e.message, /truncated by the host/)
  assert.ok(Number((e as { truncated_keys?: number }).truncated_keys) > 0, 'dropped keys are counted')
  const small = { phase: 'runtime', message: 'ValueError: x', hints: ['h'] }
  assert.equal(capError(small, CAP), small, 'an error under the cap is the same object')
})

// A forged frame can hold a value nested deeper than V8 serialises (JSON.parse takes it,
// JSON.stringify then throws): it becomes a marker the host can store; a deep value the
// guest's own encoder could make is kept.
test('a value nested past what the host can serialise becomes a marker; an ordinary deep one is kept', () => {
  let deep: unknown = 1
  for (let i = 0; i < 200_000; i++) deep = [deep]
  assert.throws(() => JSON.stringify(deep), RangeError, 'the set-up: V8 cannot serialise it')
  // The default cap: its 600,000 characters of brackets would fit by length alone.
  const m = capValue(deep, (1 << 20) + 1024) as Record<string, unknown>
  assert.equal(m.vis_truncated, true)
  assert.equal(m.type, 'array')
  assert.ok(jsonSize(m) < 200)
  let fine: unknown = 'leaf'
  for (let i = 0; i < 900; i++) fine = { k: fine }
  assert.equal(capValue(fine, CAP), fine)
})
