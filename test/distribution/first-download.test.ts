// The first session's CPython download, as a new user meets it through `vis python -c pass`
// with nothing staged: it says what it is waiting for, shows bytes and rate on a terminal
// (a pty from util-linux's `script`), prints each stall-retry when it happens, and gives up
// within its documented limit naming the URL and VIS_PYTHON_DIST_URL=file://. Loopback servers
// serve the checkout's real 3.11 archive (cpython-dist/archives), slowly, or not at all.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmodSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { createServer as createNetServer } from 'node:net'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { PLATFORM, repoRoot, tempDir } from './helpers.js'

const archives = join(repoRoot, 'cpython-dist', 'archives')
const manifestText = readFileSync(join(archives, `cpython-3.11-${PLATFORM}.json`), 'utf8')
const manifest = JSON.parse(manifestText) as { file: string; size: number }

type Line = { at: number; text: string }
type Run = { status: number | null; out: string; lines: Line[]; ms: number }

const closers: (() => void)[] = []
after(() => {
  for (const c of closers) c()
})

function env(url: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env }
  for (const k of Object.keys(e)) if (k.startsWith('VIS_')) delete e[k]
  const empty = tempDir('vis-first-staged-')
  chmodSync(empty, 0o755)
  return {
    ...e,
    VIS_HOME: join(tempDir('vis-first-home-'), 'home'),
    VIS_PYTHON_STAGED_DIR: empty,
    VIS_PYTHON_DIST_URL: url,
    VIS_PYTHON_VERSION: '3.11',
    ...extra,
  }
}

// stdout and stderr together, each line with the time it arrived.
function run(cmd: string, args: string[], e: NodeJS.ProcessEnv): Promise<Run> {
  const t0 = Date.now()
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env: e, cwd: repoRoot })
    let out = ''
    const lines: Line[] = []
    let pending = ''
    const take = (d: Buffer) => {
      out += d
      pending += d
      const parts = pending.split(/\r?\n/)
      pending = parts.pop() ?? ''
      for (const text of parts) lines.push({ at: Date.now() - t0, text })
    }
    child.stdout.on('data', take)
    child.stderr.on('data', take)
    child.on('close', (status) => resolve({ status, out, lines, ms: Date.now() - t0 }))
  })
}

const vis = (args: string[]) => [join(repoRoot, 'bin', 'vis.js'), ...args]

// Serves the manifest, then the archive in 128 KiB pieces every `everyMs` (or never finishes).
async function releaseServer(opts: { everyMs: number; stopAfter?: number }): Promise<string> {
  const archive = readFileSync(join(archives, manifest.file))
  const server: Server = createServer((req, res) => {
    if (req.url === `/cpython-3.11-${PLATFORM}.json`) return void res.end(manifestText)
    if (req.url !== `/${manifest.file}`) return void res.writeHead(404).end()
    res.writeHead(200, { 'content-length': String(archive.length) })
    let at = 0
    const timer = setInterval(() => {
      const size = opts.stopAfter !== undefined && at >= opts.stopAfter ? 1 : 128 * 1024
      res.write(archive.subarray(at, at + size))
      at += size
      if (at >= archive.length) {
        clearInterval(timer)
        res.end()
      }
    }, opts.everyMs)
    res.on('close', () => clearInterval(timer))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  closers.push(() => {
    server.closeAllConnections()
    server.close()
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

test('on a terminal the first use says so and shows bytes and rate; in a log, lines with the rate', {
  timeout: 120_000,
}, async () => {
  const url = await releaseServer({ everyMs: 15 })
  const cmd = `${process.execPath} ${vis(['python', '-c', `'print("ran")'`]).join(' ')}`
  const tty = await run('script', ['-qfec', cmd, '/dev/null'], env(url))
  assert.equal(tty.status, 0, tty.out)
  assert.ok(tty.out.includes(`first use: CPython 3.11 is not here yet: downloading it from ${url}`), tty.out)
  assert.match(tty.out, /\rdownload \[=* *\] \d+% \d+\.\d MB \/ 12\.0 MB \d+\.\d MB\/s/)
  assert.match(tty.out, /ran\r?\n/)

  const log = await run(process.execPath, vis(['python', '-c', 'print("ran")']), env(url))
  assert.equal(log.status, 0, log.out)
  assert.ok(!log.out.includes('\r'), 'no bar off a terminal')
  assert.ok(
    log.lines.some((l) => /^download: 12\.0 MB of 12\.0 MB \d+\.\d MB\/s$/.test(l.text)),
    log.out,
  )
})

test('a server that accepts and never answers: each stall-retry is printed as it happens, then the URL and VIS_PYTHON_DIST_URL=file://', {
  timeout: 60_000,
}, async () => {
  const held: Socket[] = []
  const silent = createNetServer((s) => held.push(s))
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()))
  closers.push(() => {
    silent.close()
    for (const s of held) s.destroy()
  })
  const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`
  const r = await run(
    process.execPath,
    vis(['python', '-c', 'pass']),
    env(url, { VIS_DOWNLOAD_STALL_S: '1', VIS_DOWNLOAD_RETRIES: '2' }),
  )
  assert.equal(r.status, 1, r.out)
  const manifestUrl = `${url}/cpython-3.11-${PLATFORM}.json`
  const retries = r.lines.filter((l) => l.text.startsWith('retry: '))
  assert.deepEqual(
    retries.map((l) => l.text.replace(/: ETIMEDOUT: Timeout awaiting '\w+' for 1000ms/, ': <stall>')),
    [`retry: ${manifestUrl}: <stall>; attempt 2 of 3`, `retry: ${manifestUrl}: <stall>; attempt 3 of 3`],
  )
  // Each printed when its stall ended, not at exit: the last attempt's stall (1 s) comes after.
  assert.ok((retries[1] as Line).at <= r.ms - 900, `${JSON.stringify(retries)} vs exit at ${r.ms} ms`)
  assert.ok((retries[0] as Line).at >= 900 && (retries[0] as Line).at < (retries[1] as Line).at)
  assert.ok(held.length >= 3, `three attempts connected, saw ${held.length}`)
  assert.ok(r.out.includes(`could not download ${manifestUrl}`), r.out)
  assert.match(r.out, /set VIS_PYTHON_DIST_URL=file:\/\/DIR\/cpython, the cpython\/ of a `vis bundle` DIR/)
  assert.match(r.out, /\[dist\.not-found\]/)
})

test('a download that keeps trickling gives up at VIS_DOWNLOAD_DEADLINE_S, naming the URL and the limit', {
  timeout: 60_000,
}, async () => {
  // 128 KiB, then one byte every 50 ms: never a stall, never done.
  const url = await releaseServer({ everyMs: 50, stopAfter: 128 * 1024 })
  const r = await run(
    process.execPath,
    vis(['python', '-c', 'pass']),
    env(url, { VIS_DOWNLOAD_DEADLINE_S: '3' }),
  )
  assert.equal(r.status, 1, r.out)
  assert.ok(
    r.out.includes(
      `could not download ${url}/${manifest.file} within the download's limit (3 s, VIS_DOWNLOAD_DEADLINE_S)`,
    ),
    r.out,
  )
  assert.match(r.out, /VIS_PYTHON_DIST_URL=file:\/\/DIR\/cpython/)
  assert.ok(r.ms < 3000 + 4000, `gave up after ${r.ms} ms`)
  assert.ok(!r.lines.some((l) => l.text.startsWith('retry: ')), 'the deadline is not retried')
})
