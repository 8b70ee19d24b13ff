#!/usr/bin/env node
// HTTP overhead benchmark (issue 15). Reported, never asserted.
//
//   npm run build && node bench/http.js [--json] [--iterations N] [--python 3.12] [--durability full|normal]
//
// A trivial block (`x = 1`) over HTTP keep-alive on a warm session, p50 and p99, against a floor
// measured in the same run: a Node HTTP keep-alive echo of the same body + the worker's exec round
// trip + one fsync. Then 20 sessions x 20 blocks sent at once: throughput and p99.
import { existsSync } from 'node:fs'

const dist = new URL('../dist/bench/http.js', import.meta.url)
if (!existsSync(dist)) {
  console.error('bench/http.js needs the built package: run `npm run build` first')
  process.exit(2)
}
const { measureHttp, formatHttp } = await import(dist.href)

const argv = process.argv.slice(2)
const opt = (name) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const result = await measureHttp({
  iterations: opt('--iterations') ? Number(opt('--iterations')) : undefined,
  warmup: opt('--warmup') ? Number(opt('--warmup')) : undefined,
  python: opt('--python'),
  durability: opt('--durability'),
})
console.log(argv.includes('--json') ? JSON.stringify(result) : formatHttp(result))
