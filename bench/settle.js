#!/usr/bin/env node
// What the block pipeline (parse, settle rewrite, compile, run, report) costs for tiny blocks
// (issue 13). Reported, never asserted.
//
//   npm run build && node bench/settle.js [--json] [--iterations N] [--python 3.12]
//
// Baseline, measured in the same run and the same worker: `session.exec` of the same code,
// which runs it without the block pipeline. Both are timed in alternating batches so machine
// noise lands on both; the ratio is runBlock p50 / exec p50.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const dist = new URL('../dist/sessions/create-runtime.js', import.meta.url)
if (!existsSync(dist)) {
  console.error('bench/settle.js needs the built package: run `npm run build` first')
  process.exit(2)
}
const { createRuntime } = await import(dist.href)

const argv = process.argv.slice(2)
const opt = (name) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const iterations = Number(opt('--iterations') ?? 2000)

const BLOCKS = {
  assign: 'x = 1',
  'call+print': 'r = len("abc")\nprint(r)',
  loop: [
    'total = 0',
    'for i in range(50):',
    '    v = abs(i - 25)',
    '    if v > 10:',
    '        total += v',
    'def f(a):',
    '    b = max(a, 3)',
    '    return b * 2',
    'total += f(total)',
    'total',
  ].join('\n'),
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d

const home = mkdtempSync(join(tmpdir(), 'vis-bench-settle-'))
process.env.VIS_HOME = home
const rt = await createRuntime({ home, python: opt('--python'), pool: { size: 0 }, defaultTools: false })
const s = await rt.createSession({ roots: [home] })
const out = { python: opt('--python') ?? 'default', iterations, blocks: {} }
try {
  for (const [name, code] of Object.entries(BLOCKS)) {
    const block = []
    const base = []
    for (let i = 0; i < 50; i++) {
      await s.runBlock(code)
      await s.exec(code)
    }
    const batch = 50
    for (let r = 0; r < iterations / batch; r++) {
      for (let i = 0; i < batch; i++) {
        const t0 = performance.now()
        await s.exec(code)
        base.push((performance.now() - t0) * 1000)
      }
      for (let i = 0; i < batch; i++) {
        const t0 = performance.now()
        const o = await s.runBlock(code)
        block.push((performance.now() - t0) * 1000)
        if (o.error) throw new Error(`${name}: ${JSON.stringify(o.error)}`)
      }
    }
    const b50 = quantile(block, 0.5)
    const e50 = quantile(base, 0.5)
    out.blocks[name] = { block_p50_us: round(b50), exec_p50_us: round(e50), ratio: round(b50 / e50, 2) }
  }
} finally {
  await s.dispose()
  await rt.close()
  rmSync(home, { recursive: true, force: true })
}
if (argv.includes('--json')) {
  console.log(JSON.stringify(out))
} else {
  console.log(`python ${out.python}, ${iterations} runs per block`)
  console.log(
    'block'.padEnd(12),
    'runBlock p50 µs'.padStart(16),
    'exec p50 µs'.padStart(12),
    'ratio'.padStart(7),
  )
  for (const [name, r] of Object.entries(out.blocks)) {
    console.log(
      name.padEnd(12),
      String(r.block_p50_us).padStart(16),
      String(r.exec_p50_us).padStart(12),
      String(r.ratio).padStart(7),
    )
  }
}
