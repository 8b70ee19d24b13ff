// The worker wire's one definition (src/protocol/) against the guest's Python, which reads and
// writes the same messages without TypeScript's help: its source is read for the keys it
// uses, and a real worker is sent what the contract refuses.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { PARENT_OPS, parseReply, WORK_OPS } from '../../src/protocol/parent-requests.js'
import { GuestBlockOutcome, RunBlockRequest } from '../../src/protocol/run-block.js'
import { SurvivedSchema } from '../../src/sessions/survived.js'
import { isVisError } from '../../src/util/errors.js'
import { guestDir } from '../../src/util/home.js'
import { normalizePolicy } from '../../src/worker/policy.js'
import { Worker } from '../../src/worker/worker.js'

type GuestKeys = {
  ops: Record<string, string[]>
  request: string[]
  fields: string[]
  outcome: string[]
  survived: string[]
}

const script = fileURLToPath(new URL('./guest_wire_keys.py', import.meta.url))
const guest = JSON.parse(execFileSync('python3', [script, guestDir], { encoding: 'utf8' })) as GuestKeys
const sorted = (xs: Iterable<string>) => [...xs].sort()

describe("the guest's Python uses the wire's schemas", () => {
  test('it serves exactly the work ops, each reading the parameters its schema declares', () => {
    assert.deepEqual(sorted(Object.keys(guest.ops)), sorted(WORK_OPS))
    for (const op of WORK_OPS) {
      assert.deepEqual(guest.ops[op], sorted(Object.keys(PARENT_OPS[op].params)), `the ${op} op`)
    }
  })

  test('the run-block request: the fields it accepts and reads are the schema’s, one name for the context', () => {
    const schema = sorted(Object.keys(RunBlockRequest.shape))
    assert.deepEqual(guest.fields, schema, 'vis_worker/ops.py RUN_BLOCK_FIELDS')
    assert.deepEqual(guest.request, schema, 'what ops.py, api.py and block.py read of the request')
    assert.ok(!guest.request.includes('ctx'), 'the context has one name, session')
  })

  test('the outcome: the guest writes the keys GuestBlockOutcome declares, and only those', () => {
    assert.deepEqual(guest.outcome, sorted(Object.keys(GuestBlockOutcome.shape)))
  })

  test("session['survived']: the guest reads keys SurvivedSchema declares", () => {
    const declared = new Set(Object.keys(SurvivedSchema.shape))
    assert.ok(guest.survived.length > 0)
    for (const key of guest.survived) assert.ok(declared.has(key), `the guest reads survived[${key}]`)
  })
})

describe('a real worker holds the run-block contract', () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-wire-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-wire-root-'))
  let w: Worker
  before(async () => {
    process.env.VIS_HOME = home
    w = await Worker.start({
      home,
      policy: normalizePolicy({ roots: [root] }),
      python: process.env.VIS_PYTHON_VERSION,
    })
  })
  after(async () => {
    await w?.close()
    for (const dir of [home, root]) rmSync(dir, { recursive: true, force: true })
  })

  test('the context sent as `session` is the guest’s session dict', async () => {
    const reply = await w.call('run-block', { request: { code: 'session["who"]', session: { who: 'ann' } } })
    assert.deepEqual(parseReply('run-block', reply).result, 'ann')
  })

  test('a field outside the schema (the old `ctx` name) is refused with protocol.invalid, naming it', async () => {
    // What the types no longer let the host send: the harness's old name for the context.
    const old = { code: 'session.get("who")', ctx: { who: 'ann' } } as never
    await assert.rejects(w.call('run-block', { request: old }), (e) => {
      assert.ok(isVisError(e, 'protocol.invalid'), String(e))
      assert.match(
        (e as Error).message,
        /unknown field\(s\) ctx; its fields are code, session, stdin, stdout_cap/,
      )
      return true
    })
    // The worker lives on, and the next block runs.
    const next = parseReply('run-block', await w.call('run-block', { request: { code: '6 * 7' } }))
    assert.equal(next.result, 42)
  })
})
