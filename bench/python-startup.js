#!/usr/bin/env node
// `vis python -c pass` against its floor in the same run: `node -e 0` plus python3's own start
// (the staged interpreter). Interleaved runs; the fastest of each, so machine load is not
// counted as start-up cost. Prints the ratio (issue 33: within 2x).
//   node bench/python-startup.js [runs]   (after `npm run build`)
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { platformTag } from '../dist/distribution/platform.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const runs = Number(process.argv[2] ?? 9)

export function stagedPython(minor = '3.11') {
  const dir = join(root, 'cpython-dist', minor)
  // This machine's own tree (the platform seam's tag): one staged for another architecture (the
  // release's arm64 tree) cannot be the yardstick here.
  const python = join(dir, platformTag(), 'python', 'bin', `python${minor}`)
  if (!existsSync(python))
    throw new Error(`CPython ${minor} is not staged in cpython-dist/ for ${platformTag()}`)
  return python
}

function time(cmd, args) {
  const t0 = performance.now()
  const r = spawnSync(cmd, args, { stdio: 'ignore' })
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`)
  return performance.now() - t0
}

export function measure(n = runs) {
  const py = stagedPython()
  const vis = []
  const node = []
  const python3 = []
  for (let i = 0; i < n; i++) {
    vis.push(time(process.execPath, [join(root, 'bin', 'vis.js'), 'python', '-c', 'pass']))
    node.push(time(process.execPath, ['-e', '0']))
    python3.push(time(py, ['-c', 'pass']))
  }
  const best = (a) => Math.min(...a)
  const r = { vis: best(vis), node: best(node), python3: best(python3) }
  return { ...r, ratio: r.vis / (r.node + r.python3) }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = measure()
  console.log(
    `vis python -c pass ${r.vis.toFixed(0)} ms; node -e 0 ${r.node.toFixed(0)} ms + python3 -c pass ${r.python3.toFixed(0)} ms; ratio ${r.ratio.toFixed(2)} (fastest of ${runs})`,
  )
}
