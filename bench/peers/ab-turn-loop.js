#!/usr/bin/env node
// A/B of the agent loop's overhead in one run: two built trees (e.g. a copy of dist/ made before
// a change, and dist/ after it), measured in alternating rounds so the machine's load falls on
// both alike. Prints each one's medians over all its rounds.
//
//   node --import tsx bench/peers/ab-turn-loop.js DIST_A DIST_B [--rounds 4] [--turns 8]
//
// Each tree must sit two levels below the package root (as dist/ does), so it finds node_modules.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { measureTurnLoop, percentile } from '../lib/turn-loop.js'

const argv = process.argv.slice(2)
const [a, b] = argv
if (!a || !b) {
  console.error('usage: node --import tsx bench/peers/ab-turn-loop.js DIST_A DIST_B [--rounds N] [--turns N]')
  process.exit(2)
}
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? Number(argv[i + 1]) : dflt
}
const trees = [a, b].map((d) => ({ name: d, dist: pathToFileURL(`${resolve(d)}/`), runs: [] }))
for (let r = 0; r < opt('--rounds', 4); r++) {
  for (const t of r % 2 === 0 ? trees : [...trees].reverse()) {
    t.runs.push(await measureTurnLoop({ dist: t.dist, turns: opt('--turns', 8) }))
  }
}
const med = (xs) => percentile(xs, 50).toFixed(3)
for (const t of trees) {
  const per = (f) => med(t.runs.map(f))
  console.log(
    `${t.name}: per iteration over block + SDK, whole turns: wall ${per((x) => x.turn_overhead_per_iteration_ms.wall.p50)} ms, CPU ${per((x) => x.turn_overhead_per_iteration_ms.cpu.p50)} ms; one iteration's window: wall ${per((x) => x.overhead_vs_sdk_ms.p50)} ms, CPU ${per((x) => x.cpu_overhead_ms.p50)} ms; loop only ${per((x) => x.overhead_ms.p50)} ms (load ${per((x) => x.load_average_1m)})`,
  )
}
