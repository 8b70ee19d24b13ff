#!/usr/bin/env node
// A/B of MCP over stdio in one run: two CLI entry scripts (e.g. bin/vis.js and a copy pointing at
// a build made before a change), each serving its own client, measured in alternating rounds.
//
//   node bench/peers/ab-mcp.js ENTRY_A ENTRY_B [--warmup N] [--rounds N] [--batch N]
import { startMcpStdio } from './mcp-stdio.js'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? Number(argv[i + 1]) : dflt
}
const entries = argv.slice(0, 2)
if (entries.length < 2 || entries.some((e) => e.startsWith('--'))) {
  console.error('usage: node bench/peers/ab-mcp.js ENTRY_A ENTRY_B [--warmup N] [--rounds N] [--batch N]')
  process.exit(2)
}
const servers = []
for (const entry of entries) servers.push({ entry, mcp: await startMcpStdio({ entry }) })
try {
  for (const s of servers) await s.mcp.warm(opt('--warmup', 1000))
  for (let r = 0; r < opt('--rounds', 20); r++) {
    for (const s of r % 2 === 0 ? servers : [...servers].reverse()) await s.mcp.round(opt('--batch', 100))
  }
} finally {
  for (const s of servers) await s.mcp.close()
}
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]
for (const { entry, mcp } of servers) {
  console.log(
    `${entry}: p50 ${q(mcp.us, 0.5).toFixed(0)} µs, p99 ${q(mcp.us, 0.99).toFixed(0)} µs, server CPU ${mcp.cpuPerCallUs().toFixed(0)} µs per call (${mcp.us.length} calls)`,
  )
}
