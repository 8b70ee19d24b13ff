// Per-layer run: each kernel layer alone (and none, and all) under the direct jail, plus
// two columns through real sessions: the audit hook alone (a worker with no OS jail, only
// the in-process hook and its policy) and the kernel alone (the jailed worker with an
// audit policy that refuses nothing). It prints which attack cases each one stops by
// itself. A report, not a test: no promise should rest on a single layer, and the "none"
// column proves every case is a real attack.
//   node --import tsx test/confinement/layers.ts [filter]
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cases } from './cases.js'
import { type CaseResult, LAYERS, runCase, startHarness } from './harness.js'
import { type SessionRunner, startSessionRunner } from './session-harness.js'

process.env.VIS_HOME = mkdtempSync(join(tmpdir(), 'vis-home-'))
process.env.VIS_TEST_HOST_SECRET = 'hunter2'
const filter = process.argv[2]
const selected = cases.filter((c) => c.expect === 'contained' && (!filter || c.id.includes(filter)))
const h = await startHarness()
const runners: Record<string, SessionRunner> = {
  audit: await startSessionRunner(h, { confine: false }),
  kernel: await startSessionRunner(h, { auditPolicy: 'permissive' }),
}
// Without a jail nothing bounds the host's memory: the memory bomb would take it.
const UNSAFE_UNJAILED = new Set(['bomb.memory'])
const COLUMNS = [...LAYERS, 'audit', 'kernel'] as const
const mark = { contained: 'stop', killed: 'kill', escaped: '  - ', ok: '  - ', error: 'err ' } as const
const stops: Record<string, number> = Object.fromEntries(COLUMNS.map((l) => [l, 0]))

process.stdout.write(`${'case'.padEnd(36)} ${COLUMNS.map((l) => l.padEnd(10)).join(' ')}\n`)
for (const c of selected) {
  const row: string[] = []
  for (const col of COLUMNS) {
    const runner = runners[col]
    let r: Pick<CaseResult, 'verdict'>
    if (runner) {
      if (col === 'audit' && UNSAFE_UNJAILED.has(c.id)) {
        row.push('n/a'.padEnd(10))
        continue
      }
      r = await runner.run(c)
    } else r = await runCase(h, c, col as (typeof LAYERS)[number])
    if (r.verdict === 'contained' || r.verdict === 'killed') stops[col] = (stops[col] ?? 0) + 1
    row.push(mark[r.verdict].padEnd(10))
  }
  process.stdout.write(`${c.id.padEnd(36)} ${row.join(' ')}\n`)
}
process.stdout.write(
  `${'stopped'.padEnd(36)} ${COLUMNS.map((l) => `${stops[l]}/${selected.length}`.padEnd(10)).join(' ')}\n`,
)
process.stdout.write(
  'stop = contained by that column alone; kill = killed by a limit; err = did not run cleanly (often: the layer broke the attack setup); n/a = not run (unsafe without a jail)\n' +
    'audit = a session worker with no OS jail, only the audit hook and its policy; kernel = a jailed session worker whose audit policy refuses nothing\n',
)
for (const r of Object.values(runners)) await r.close()
await h.close()
