// Drafts at scale: a draft of a 100,000-file tree, and applying 1,000 changed files.
//   node --import tsx bench/drafts.js [--files 100000] [--changed 1000]
// Baselines measured in the same run: a block's worker start on the trunk (what a draft's
// first block also pays), and copying the same 1,000 files with fs.copyFile. Target: each
// draft figure under a second. Reports, never asserts.
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createEngine } from '../src/engine/index.js'

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : dflt
}
const FILES = arg('files', 100_000)
const CHANGED = arg('changed', 1000)
const home = mkdtempSync(join(tmpdir(), 'vis-bench-drafts-home-'))
process.env.VIS_HOME = home
const root = mkdtempSync(join(tmpdir(), 'vis-bench-drafts-root-'))

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6
const fmt = (x) => `${x.toFixed(1)} ms`

let t = process.hrtime.bigint()
for (let d = 0; d < FILES / 1000; d++) {
  const dir = join(root, `d${d}`)
  mkdirSync(dir)
  for (let f = 0; f < 1000; f++) writeFileSync(join(dir, `f${f}.txt`), `file ${d}/${f}\nsecond line\n`)
}
console.log(`tree: ${FILES} files written in ${fmt(ms(t))}`)

const e = await createEngine({ home, python: process.env.VIS_PYTHON_VERSION, pool: { size: 0 } })
try {
  const s = await e.createSession({ roots: [root] })
  await e.runBlock(s.id, { code: 'x = 1' })

  // Baseline: replacing the worker on the trunk and running one block.
  t = process.hrtime.bigint()
  await e.drafts.create(s.id, 'baseline')
  await e.drafts.abandon(s.id, 'baseline')
  const trunkRestart = process.hrtime.bigint()
  await e.runBlock(s.id, { code: 'x = 2' })
  const trunkBlock = ms(trunkRestart)

  t = process.hrtime.bigint()
  await e.drafts.create(s.id, 'bench')
  const create = ms(t)
  t = process.hrtime.bigint()
  const first = await e.runBlock(s.id, { code: 'import os\nprint(len(os.listdir("d0")))' })
  const firstBlock = ms(t)
  if (first.block.stdout !== '1000\n') throw new Error(`unexpected: ${first.block.stdout}`)

  const code = `for i in range(${CHANGED}):
    d, f = divmod(i, 10)
    with open(f"d{d}/f{f}.txt", "a") as fh:
        fh.write("changed in the draft\\n")`
  t = process.hrtime.bigint()
  const w = await e.runBlock(s.id, { code })
  const write = ms(t)
  if (w.block.status !== 'done') throw new Error(JSON.stringify(w.block.error))

  t = process.hrtime.bigint()
  const diff = await e.drafts.diff(s.id)
  const diffMs = ms(t)
  if (diff.changes.length !== CHANGED) throw new Error(`diff has ${diff.changes.length} changes`)

  t = process.hrtime.bigint()
  const applied = await e.drafts.apply(s.id)
  const apply = ms(t)
  if (applied.landed.length !== CHANGED) throw new Error(`landed ${applied.landed.length}`)

  // Baseline: plain copies of the same number of files.
  const scratch = mkdtempSync(join(tmpdir(), 'vis-bench-drafts-copy-'))
  t = process.hrtime.bigint()
  for (let i = 0; i < CHANGED; i++) {
    const [d, f] = [Math.floor(i / 10), i % 10]
    copyFileSync(join(root, `d${d}`, `f${f}.txt`), join(scratch, `${i}.txt`))
  }
  const copy = ms(t)

  console.log(`draft create (${FILES} files):     ${fmt(create)}`)
  console.log(
    `first block in the draft:          ${fmt(firstBlock)}  (trunk baseline ${fmt(trunkBlock)}, ratio ${(firstBlock / trunkBlock).toFixed(2)})`,
  )
  console.log(`block changing ${CHANGED} files:        ${fmt(write)}`)
  console.log(
    `diff of ${CHANGED} files:              ${fmt(diffMs)}  (${(diff.diff.length / 1024).toFixed(0)} KiB)`,
  )
  console.log(
    `apply ${CHANGED} files:                ${fmt(apply)}  (plain copy baseline ${fmt(copy)}, ratio ${(apply / copy).toFixed(2)})`,
  )
} finally {
  await e.close()
}
