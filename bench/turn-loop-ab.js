#!/usr/bin/env node
// The agent loop's overhead per iteration (bench/lib/turn-loop.js) for two builds in ONE process,
// alternating one short run of each per round so the shared machine's noise hits both alike.
// Prints each side's median over the rounds of the whole-turn figures issue 34 targets (wall and
// CPU beyond the block and the SDK calling the same double), the machine's load beside them.
// Reported, never asserted.
//
//   npm run build && node --import tsx bench/turn-loop-ab.js --baseline /work/main [--rounds 6] [--turns 8]
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { measureTurnLoop, percentile } from './lib/turn-loop.js'

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    this: { type: 'string', default: new URL('..', import.meta.url).pathname },
    rounds: { type: 'string', default: '6' },
    turns: { type: 'string', default: '8' },
    iterations: { type: 'string', default: '8' },
  },
})
if (!args.baseline) {
  console.error('usage: node --import tsx bench/turn-loop-ab.js --baseline <checkout with a built dist/>')
  process.exit(2)
}
const distOf = (dir) => new URL('dist/', pathToFileURL(`${resolve(dir)}/`))
const sides = [
  { name: 'baseline', dist: distOf(args.baseline), wall: [], cpu: [], iterWall: [], iterCpu: [] },
  { name: 'this', dist: distOf(args.this), wall: [], cpu: [], iterWall: [], iterCpu: [] },
]
const load0 = loadavg()[0]
for (let round = 0; round < Number(args.rounds); round++) {
  // Which side goes first alternates too: neither always runs on the warmer machine.
  for (const side of round % 2 ? [...sides].reverse() : sides) {
    const r = await measureTurnLoop({
      dist: side.dist,
      turns: Number(args.turns),
      iterations: Number(args.iterations),
    })
    side.wall.push(r.turn_overhead_per_iteration_ms.wall.p50)
    side.cpu.push(r.turn_overhead_per_iteration_ms.cpu.p50)
    side.iterWall.push(r.overhead_vs_sdk_ms.p50)
    side.iterCpu.push(r.cpu_overhead_ms.p50)
  }
}
const f = (xs) => percentile(xs, 50).toFixed(3)
console.log(
  `agent loop beyond block + SDK, per iteration, median of ${args.rounds} rounds × ${args.turns} turns (load ${load0.toFixed(2)} → ${loadavg()[0].toFixed(2)})`,
)
console.log(`  ${''.padEnd(10)} whole-turn wall   whole-turn CPU   iteration wall   iteration CPU`)
for (const s of sides)
  console.log(
    `  ${s.name.padEnd(10)} ${f(s.wall).padStart(10)} ms   ${f(s.cpu).padStart(11)} ms   ${f(s.iterWall).padStart(11)} ms   ${f(s.iterCpu).padStart(10)} ms`,
  )
const [a, b] = sides
console.log(
  `  this ÷ baseline: wall ${(percentile(b.wall, 50) / percentile(a.wall, 50)).toFixed(2)}, CPU ${(percentile(b.cpu, 50) / percentile(a.cpu, 50)).toFixed(2)}`,
)
