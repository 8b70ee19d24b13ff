import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type AttackCase, cases } from './cases.js'
import { type Harness, startHarness } from './harness.js'
import { hostSnapshot, type SessionRunner, startSessionRunner } from './session-harness.js'

// The whole catalogue through real sessions (createRuntime -> createSession ->
// runBlock): the jailed worker is the unit of trust. Twice:
// - production: the audit policy, seccomp and the OS jail together, as sessions run;
// - kernel only: the same jailed worker with an audit policy that refuses nothing, and a
//   prelude that undoes the guest runtime's Python shims, so every case meets the kernel
//   layers with nothing else in the way (no promise rests on the hook or on Python).
// Each case must be contained (or keep working, for controls), leave the host's files as
// they were, and leave an untouched sentinel session answering.
let h: Harness
let baseline: string
before(async () => {
  process.env.VIS_HOME = mkdtempSync(join(tmpdir(), 'vis-home-'))
  process.env.VIS_TEST_HOST_SECRET = 'hunter2'
  h = await startHarness()
  baseline = hostSnapshot(h)
})
after(async () => {
  await h?.close()
})

const selected = cases.filter((c) => c.runs !== 'jail')

function assertContained(
  c: AttackCase,
  expect: AttackCase['expect'],
  r: { verdict: string; stdout: string; stderr: string },
) {
  const detail = `${r.verdict}\n${r.stdout.slice(-1500)}\n${r.stderr.slice(-1500)}`
  if (expect === 'works') assert.equal(r.verdict, 'ok', detail)
  else if (c.killOk || c.category === 'bombs')
    assert.ok(r.verdict === 'contained' || r.verdict === 'killed', detail)
  else assert.equal(r.verdict, 'contained', detail)
  assert.equal(hostSnapshot(h), baseline, `${c.id} changed the host's files`)
}

for (const mode of ['production', 'kernel only'] as const) {
  describe(`sessions, ${mode}`, () => {
    let runner: SessionRunner
    before(async () => {
      runner = await startSessionRunner(h, mode === 'kernel only' ? { auditPolicy: 'permissive' } : {})
    })
    after(async () => {
      await runner?.close()
    })
    for (const c of selected) {
      // The audit policy refuses processes from Python even with the shell on (the
      // shell tool runs them); with the hook out of the way, the kernel allows them.
      const expect = mode === 'production' ? (c.sessionExpect ?? c.expect) : c.expect
      test(`${c.category}: ${c.id} ${expect === 'works' ? 'keeps working' : 'is contained'}`, async () => {
        assertContained(c, expect, await runner.run(c))
      })
    }
    test('the sentinel session is unaffected by every case run beside it', async () => {
      const r = await runner.sentinel.runBlock('x = 6 * 7\nx')
      assert.equal(r.result, 42)
      assert.equal(runner.sentinel.state, 'ready')
    })
  })
}
