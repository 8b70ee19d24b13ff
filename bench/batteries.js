#!/usr/bin/env node
// What a staged package set costs (issue 20). Reported, never asserted.
//
//   npm run build && node bench/batteries.js [--json] [--tree DIR] [--lean DIR] [--rounds N]
//
// Cold session start and idle worker RSS with the set staged, against a lean copy of the
// same tree measured in the same run, and the first import of numpy, pandas, pyplot, PIL
// and requests inside a session. --tree defaults to cpython-dist/3.11/<platform>/python;
// --lean names a tree staged without the set (default: staged for the run from the local CPython).
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

const mod = new URL('../dist/bench/batteries.js', import.meta.url)
if (!existsSync(mod)) {
  console.error('bench/batteries.js needs the built package: run `npm run build` first')
  process.exit(2)
}
const { measureBatteries, formatBatteries } = await import(mod.href)
const argv = process.argv.slice(2)
const opt = (name) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const base = new URL('../cpython-dist/3.11/', import.meta.url).pathname
const tree =
  opt('--tree') ?? join(base, readdirSync(base).find((p) => p.startsWith('linux-')) ?? '', 'python')
const result = await measureBatteries(tree, {
  rounds: opt('--rounds') ? Number(opt('--rounds')) : 5,
  lean: opt('--lean'),
})
console.log(argv.includes('--json') ? JSON.stringify(result) : formatBatteries(result))
