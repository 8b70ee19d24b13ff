#!/usr/bin/env node
// Profiles the built `vis mcp` over stdio on trivial blocks (issue 34: take the milliseconds out):
// the server runs under `node --cpu-prof`, the profile is written to DIR when it exits.
//
//   npm run build && node bench/peers/profile-mcp.js DIR [--warmup N] [--iterations N]
import { startMcpStdio } from './mcp-stdio.js'

const argv = process.argv.slice(2)
const dir = argv[0]
if (!dir) {
  console.error('usage: node bench/peers/profile-mcp.js DIR [--warmup N] [--iterations N]')
  process.exit(2)
}
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? Number(argv[i + 1]) : dflt
}
const mcp = await startMcpStdio({ nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir] })
await mcp.warm(opt('--warmup', 1000))
const n = opt('--iterations', 2000)
for (let i = 0; i < n; i += 100) await mcp.round(Math.min(100, n - i))
await mcp.close()
const s = [...mcp.us].sort((a, b) => a - b)
const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(0)
console.log(`MCP stdio x = 1: p50 ${q(0.5)} µs, p99 ${q(0.99)} µs over ${s.length}; profile in ${dir}`)
