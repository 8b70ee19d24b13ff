#!/usr/bin/env node
// Start-up of the CLI against Node importing the openai SDK, measured in the same run, rounds
// alternating so machine noise hits every row alike (issue 32 §2). Prints each row's median and
// its ratio to the SDK's import. Reported, never asserted.
//   - `vis help`, `vis --version`: the whole process, spawn to exit.
//   - `vis run`: spawn to its first model request reaching a local OpenAI-compatible endpoint
//     (a loopback server answering the Chat Completions stream), on a home that has run once
//     before, and on a fresh home beside it.
//
//   npm run build && node bench/startup.js [--rounds 7]
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const argv = process.argv.slice(2)
const ROUNDS = Number(argv[argv.indexOf('--rounds') + 1] || 7)
const repo = resolve(import.meta.dirname, '..')
const vis = join(repo, 'bin', 'vis.js')

// A Chat Completions endpoint that notes when each request arrives and answers with a final text.
function endpoint() {
  const arrivals = []
  const server = createServer((req, res) => {
    arrivals.push(performance.now())
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const chunk = (delta, finish = null) =>
        `data: ${JSON.stringify({
          id: 'chatcmpl-bench',
          object: 'chat.completion.chunk',
          created: 0,
          model: 'bench',
          choices: [{ index: 0, delta, finish_reason: finish }],
        })}\n\n`
      res.end(`${chunk({ role: 'assistant', content: 'ok' })}${chunk({}, 'stop')}data: [DONE]\n\n`)
    })
  })
  return new Promise((r) =>
    server.listen(0, '127.0.0.1', () =>
      r({ server, arrivals, url: `http://127.0.0.1:${server.address().port}/v1` }),
    ),
  )
}

function timed(cmd, args, opts = {}) {
  return new Promise((resolveRun, reject) => {
    const t0 = performance.now()
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], ...opts })
    let err = ''
    child.stderr.on('data', (d) => {
      err += d
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(-500)}`))
      else resolveRun(performance.now() - t0)
    })
  })
}

// Spawn to the first request's arrival; the process runs its turn to the end.
async function firstRequest(ep, home, cwd) {
  const before = ep.arrivals.length
  const t0 = performance.now()
  await timed(process.execPath, [vis, 'run', 'say ok'], {
    cwd,
    env: {
      ...process.env,
      VIS_HOME: home,
      VIS_MODEL: 'openai/bench',
      OPENAI_BASE_URL: ep.url,
      OPENAI_API_KEY: 'sk-bench',
    },
  })
  return ep.arrivals[before] - t0
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

const ep = await endpoint()
const warmHome = mkdtempSync(join(tmpdir(), 'vis-bench-startup-home-'))
const cwd = mkdtempSync(join(tmpdir(), 'vis-bench-startup-ws-'))
await firstRequest(ep, warmHome, cwd) // the home has run once before
const rows = { openai: [], help: [], version: [], run: [], 'run, fresh home': [] }
for (let i = 0; i < ROUNDS; i++) {
  rows.openai.push(await timed(process.execPath, ['-e', "require('openai')"], { cwd: repo }))
  rows.help.push(await timed(process.execPath, [vis, 'help']))
  rows.version.push(await timed(process.execPath, [vis, '--version']))
  rows.run.push(await firstRequest(ep, warmHome, cwd))
  const fresh = mkdtempSync(join(tmpdir(), 'vis-bench-startup-fresh-'))
  rows['run, fresh home'].push(await firstRequest(ep, fresh, cwd))
  rmSync(fresh, { recursive: true, force: true })
}
ep.server.close()
rmSync(warmHome, { recursive: true, force: true })

const base = median(rows.openai)
console.log(`CLI start-up, ${ROUNDS} rounds (load ${loadavg()[0].toFixed(2)})`)
console.log('row                              p50 ms   × openai import   target')
const targets = { help: '≤ 1×', version: '≤ 1×', run: '≤ 1.5×' }
for (const [name, xs] of Object.entries(rows)) {
  const label =
    name === 'openai'
      ? 'node: require("openai")'
      : name === 'run'
        ? 'vis run: first model request'
        : name === 'run, fresh home'
          ? 'vis run: first request, fresh home'
          : `vis ${name === 'version' ? '--version' : name}`
  console.log(
    `${label.padEnd(34)} ${median(xs).toFixed(0).padStart(6)}   ${(median(xs) / base).toFixed(2).padStart(15)}   ${targets[name] ?? ''}`,
  )
}
