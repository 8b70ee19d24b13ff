// Parent <-> worker-child round trips over the child's fd 3 (a unix socketpair), one
// JSON line each way, the way src/worker talks to its child:
//   bare Node echo (the floor), wire-mode exec of `x = 1` (C++ reads the socket, the
//   interpreter thread writes the reply), and the same exec routed through the child's JS.
//   node --import tsx bench/native-wire.js [--n 3000]
// Prints p50/p99 in µs and ratios to the floor's p50. Reports, never asserts.
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const nArg = process.argv.indexOf('--n')
const N = nArg > 0 ? Number(process.argv[nArg + 1]) : 3000
const WARMUP = Math.min(300, Math.floor(N / 10))
const env = { ...process.env, VIS_HOME: process.env.VIS_HOME ?? mkdtempSync(join(tmpdir(), 'vis-bench-')) }
const childJs = fileURLToPath(new URL('./native-wire/child.js', import.meta.url))

function startChild(mode) {
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), childJs, mode], {
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
  })
  const sock = child.stdio[3]
  const waiting = new Map()
  createInterface({ input: sock }).on('line', (line) => {
    const msg = JSON.parse(line)
    if (msg.op) return
    waiting.get(msg.id)?.(msg)
    waiting.delete(msg.id)
  })
  let next = 0
  const request = (op, code) =>
    new Promise((resolve) => {
      const id = ++next
      waiting.set(id, resolve)
      sock.write(`${JSON.stringify({ id, op, code })}\n`)
    })
  return { child, request }
}

function stats(samplesNs) {
  const s = [...samplesNs].sort((a, b) => a - b)
  const pick = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))] / 1000
  return { p50: pick(0.5), p99: pick(0.99) }
}

async function timeLoop(once) {
  const out = []
  for (let i = 0; i < N + WARMUP; i++) {
    const t0 = process.hrtime.bigint()
    await once()
    if (i >= WARMUP) out.push(Number(process.hrtime.bigint() - t0))
  }
  return stats(out)
}

const rows = []
const bare = startChild('bare')
await bare.request('echo', '')
rows.push(['Node<->Node echo (floor)', await timeLoop(() => bare.request('echo', ''))])
bare.child.kill()

const wire = startChild('wire')
while (
  (await Promise.race([
    wire.request('exec', 'x = 0'),
    new Promise((r) => setTimeout(() => r(null), 5000)),
  ])) === null
) {}
rows.push(['wire exec("x = 1")', await timeLoop(() => wire.request('exec', 'x = 1'))])
rows.push(['via child JS exec("x = 1")', await timeLoop(() => wire.request('js-exec', 'x = 1'))])
wire.child.kill()

const base = rows[0][1].p50
console.log(`worker round trips over a socketpair, n=${N} (after ${WARMUP} warm-up), µs`)
console.log(`${'what'.padEnd(28)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'p50 / floor'.padStart(12)}`)
for (const [name, s] of rows) {
  console.log(
    `${name.padEnd(28)} ${s.p50.toFixed(1).padStart(8)} ${s.p99.toFixed(1).padStart(8)} ${(s.p50 / base).toFixed(2).padStart(11)}x`,
  )
}
