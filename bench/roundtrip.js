#!/usr/bin/env node
// Round-trip benchmark for session workers (issue 4). Reported, never asserted.
//
//   npm run build && node bench/roundtrip.js [--json] [--iterations N] [--python 3.12] [--no-pin]
//
// It imports the BUILT package (dist/), so the workers it measures start the way they do
// for users: plain `node dist/worker/child.js`, no TypeScript loader. `--json` prints one
// JSON object; without it, a table (the same one `vis bench` prints).
import { existsSync } from 'node:fs'

const dist = new URL('../dist/bench/roundtrip.js', import.meta.url)
if (!existsSync(dist)) {
  console.error('bench/roundtrip.js needs the built package: run `npm run build` first')
  process.exit(2)
}
const { measureRoundtrip, formatRoundtrip } = await import(dist.href)

const argv = process.argv.slice(2)
const opt = (name) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const iterations = opt('--iterations') ? Number(opt('--iterations')) : undefined
const result = await measureRoundtrip({
  iterations,
  python: opt('--python'),
  pin: !argv.includes('--no-pin'),
})
console.log(argv.includes('--json') ? JSON.stringify(result) : formatRoundtrip(result))
