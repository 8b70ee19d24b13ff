// Per-layer run: each kernel layer alone (and none, and all), printing which
// attack cases it stops by itself. A report, not a test: no promise should rest
// on a single layer, and the "none" column proves every case is a real attack.
//   node --import tsx test/confinement/layers.ts [filter]
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cases } from './cases.js'
import { LAYERS, runCase, startHarness } from './harness.js'

process.env.VIS_HOME = mkdtempSync(join(tmpdir(), 'vis-home-'))
process.env.VIS_TEST_HOST_SECRET = 'hunter2'
const filter = process.argv[2]
const selected = cases.filter((c) => c.expect === 'contained' && (!filter || c.id.includes(filter)))
const h = await startHarness()
const mark = { contained: 'stop', killed: 'kill', escaped: '  - ', ok: '  - ', error: 'err ' } as const
const stops: Record<string, number> = Object.fromEntries(LAYERS.map((l) => [l, 0]))

process.stdout.write(`${'case'.padEnd(36)} ${LAYERS.map((l) => l.padEnd(10)).join(' ')}\n`)
for (const c of selected) {
  const row: string[] = []
  for (const layer of LAYERS) {
    const r = await runCase(h, c, layer)
    if (r.verdict === 'contained' || r.verdict === 'killed') stops[layer] = (stops[layer] ?? 0) + 1
    row.push(mark[r.verdict].padEnd(10))
  }
  process.stdout.write(`${c.id.padEnd(36)} ${row.join(' ')}\n`)
}
process.stdout.write(
  `${'stopped'.padEnd(36)} ${LAYERS.map((l) => `${stops[l]}/${selected.length}`.padEnd(10)).join(' ')}\n`,
)
process.stdout.write(
  'stop = the layer alone contained it; kill = killed by a limit; err = did not run cleanly (often: the layer broke the attack setup)\n',
)
await h.close()
