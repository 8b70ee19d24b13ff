import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { cases } from './cases.js'
import { type Harness, runCase, startHarness } from './harness.js'

// Every case through the production path: spawnConfined (bubblewrap + vis-launcher
// + cgroups + egress) with seccomp installed before the hostile code runs.
let h: Harness
before(async () => {
  process.env.VIS_HOME = mkdtempSync(join(tmpdir(), 'vis-home-'))
  // A host secret the sandbox must never see, in environ or /proc/self/environ.
  process.env.VIS_TEST_HOST_SECRET = 'hunter2'
  h = await startHarness()
})
after(async () => {
  await h.close()
})

test('the catalogue holds at least 50 attacks and the controls', () => {
  assert.ok(cases.filter((c) => c.expect === 'contained').length >= 50)
  assert.ok(cases.filter((c) => c.expect === 'works').length >= 7)
  assert.equal(new Set(cases.map((c) => c.id)).size, cases.length)
})

for (const c of cases) {
  test(`${c.category}: ${c.id} ${c.expect === 'works' ? 'keeps working' : 'is contained'}`, async () => {
    const r = await runCase(h, c, 'all')
    const detail = `${r.verdict} code=${r.code} signal=${r.signal}\n${r.stdout}\n${r.stderr.slice(-1500)}`
    if (c.expect === 'works') assert.equal(r.verdict, 'ok', detail)
    else if (c.killOk) assert.ok(r.verdict === 'contained' || r.verdict === 'killed', detail)
    else assert.equal(r.verdict, 'contained', detail)
  })
}
