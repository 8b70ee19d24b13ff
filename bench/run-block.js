#!/usr/bin/env node
// session.runBlock('x = 1') against the bare session.exec('x = 1') round trip, in-process,
// alternating the two so machine noise hits both alike (issue 15 §5). Reported, never asserted.
//
//   npm run build && node bench/run-block.js [--iterations N] [--python 3.12] [--dist DIR] [--json]
//
// --dist points at another checkout's dist/ (a same-run baseline: `--dist /work/main/dist`).
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const argv = process.argv.slice(2)
const opt = (name) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const distDir = resolve(opt('--dist') ?? new URL('../dist', import.meta.url).pathname)
const entry = join(distDir, 'sessions/create-runtime.js')
if (!existsSync(entry)) {
  console.error(`bench/run-block.js needs the built package at ${distDir}: run \`npm run build\` first`)
  process.exit(2)
}
const { createRuntime } = await import(pathToFileURL(entry).href)
const n = Number(opt('--iterations') ?? 3000)
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}
const home = mkdtempSync(join(tmpdir(), 'vis-bench-block-'))
const root = mkdtempSync(join(tmpdir(), 'vis-bench-block-root-'))
const rt = await createRuntime({ home, python: opt('--python'), pool: { size: 0 } })
try {
  const s = await rt.createSession({ roots: [root] })
  for (let i = 0; i < 300; i++) {
    await s.exec('x = 1')
    await s.runBlock('x = 1')
    await s.runBlock(`y = -${i}`)
  }
  // exec, the same block text again (what the issue measures), and a text never run before
  // (`x = <i>`: parsed, rewritten and compiled every time, and a new constant to report).
  const exec = []
  const block = []
  const fresh = []
  const timed = async (into, fn) => {
    const t = process.hrtime.bigint()
    const out = await fn()
    into.push(Number(process.hrtime.bigint() - t) / 1000)
    if (out?.error) throw new Error(`the block failed: ${JSON.stringify(out.error)}`)
  }
  for (let i = 0; i < n; i++) {
    await timed(exec, () => s.exec('x = 1'))
    await timed(block, () => s.runBlock('x = 1'))
    await timed(fresh, () => s.runBlock(`y = ${i}`))
  }
  await s.dispose()
  const r = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d
  const result = {
    dist: distDir,
    iterations: n,
    exec_p50_us: r(quantile(exec, 0.5)),
    exec_p99_us: r(quantile(exec, 0.99)),
    block_p50_us: r(quantile(block, 0.5)),
    block_p99_us: r(quantile(block, 0.99)),
    fresh_p50_us: r(quantile(fresh, 0.5)),
    fresh_p99_us: r(quantile(fresh, 0.99)),
  }
  result.ratio_p50 = r(result.block_p50_us / result.exec_p50_us, 2)
  result.fresh_ratio_p50 = r(result.fresh_p50_us / result.exec_p50_us, 2)
  if (argv.includes('--json')) console.log(JSON.stringify(result))
  else {
    console.log(`dist ${distDir}, ${n} alternating rounds`)
    console.log(`exec('x = 1')                p50 ${result.exec_p50_us} µs  p99 ${result.exec_p99_us} µs`)
    console.log(
      `runBlock('x = 1')            p50 ${result.block_p50_us} µs  p99 ${result.block_p99_us} µs  ${result.ratio_p50}× exec`,
    )
    console.log(
      `runBlock('y = <i>') (new)    p50 ${result.fresh_p50_us} µs  p99 ${result.fresh_p99_us} µs  ${result.fresh_ratio_p50}× exec`,
    )
  }
} finally {
  await rt.close()
  rmSync(home, { recursive: true, force: true })
  rmSync(root, { recursive: true, force: true })
}
