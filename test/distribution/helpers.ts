// Shared fixtures for the distribution tests: ONE real staged 3.11 tree (with
// pytest) and ONE small install_only archive cut from it, built once per test
// run and shared by the test files of that run; plus a loopback release
// server (Hono) that can misbehave on purpose.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type HttpBindings, serve } from '@hono/node-server'
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response'
import { Hono } from 'hono'
import { packTree, writeArchiveManifests } from '../../src/distribution/archive.js'
import { findLocalPython } from '../../src/distribution/discover.js'
import { archiveName, treePaths } from '../../src/distribution/layout.js'
import type { ArchiveManifest } from '../../src/distribution/manifest.js'
import { platformTag } from '../../src/distribution/platform.js'
import { type StageResult, stageFromPython } from '../../src/distribution/stage.js'

export const repoRoot = new URL('../..', import.meta.url).pathname.replace(/\/$/, '')
export const MINOR = '3.11'
export const PLATFORM = platformTag()

export type Fixtures = {
  // cpython-dist-style directory with the full staged tree and its archive.
  out: string
  staged: StageResult
  // A release directory: the small archive and its manifests.
  release: string
  small: ArchiveManifest
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

// The test runner is our parent: its pid names this run's fixtures.
const base = join(tmpdir(), `vis-dist-fixtures-${process.ppid}`)

function cleanOtherRuns(): void {
  for (const name of readdirSync(tmpdir())) {
    const m = /^vis-dist-fixtures-(\d+)$/.exec(name)
    if (m && Number(m[1]) !== process.ppid && !alive(Number(m[1]))) {
      rmSync(join(tmpdir(), name), { recursive: true, force: true })
    }
  }
}

let cached: Promise<Fixtures> | undefined

export function fixtures(): Promise<Fixtures> {
  cached ??= loadOrBuild()
  return cached
}

async function loadOrBuild(): Promise<Fixtures> {
  const ready = join(base, 'ready.json')
  try {
    mkdirSync(base)
  } catch {
    // Another test file of this run is building them: wait.
    for (let i = 0; i < 600 && !existsSync(ready); i++) await new Promise((r) => setTimeout(r, 200))
    if (!existsSync(ready)) throw new Error(`fixtures in ${base} never became ready`)
    return JSON.parse(readFileSync(ready, 'utf8')) as Fixtures
  }
  cleanOtherRuns()
  const py = findLocalPython(MINOR)
  if (!py) throw new Error(`the distribution tests need a local shared-library CPython ${MINOR}`)
  const out = join(base, 'out')
  const staged = await stageFromPython(py.executable, { out, withPytest: true })
  const release = join(base, 'release')
  mkdirSync(release)
  const small = await cutSmallArchive(staged.root, staged.version, release)
  const f: Fixtures = { out, staged, release, small }
  writeFileSync(`${ready}.tmp`, JSON.stringify(f))
  // rename is atomic: a waiter never reads half a file.
  const { renameSync } = await import('node:fs')
  renameSync(`${ready}.tmp`, ready)
  return f
}

// Enough of the stdlib for the interpreter to start and import json; the
// real libpython, binary, headers and a few extension modules.
const KEEP_PACKAGES = ['encodings', 'json', 're', 'collections', 'importlib']
const KEEP_EXTENSIONS = /^(_json|math|_struct|_datetime|_bisect|_random|_heapq|select|_posixsubprocess)\./

async function cutSmallArchive(fullRoot: string, version: string, release: string): Promise<ArchiveManifest> {
  const work = mkdtempSync(join(base, 'small-'))
  const root = join(work, 'python')
  const full = treePaths(fullRoot, MINOR)
  const p = treePaths(root, MINOR)
  cpSync(full.bin, p.bin, { recursive: true, verbatimSymlinks: true })
  mkdirSync(p.stdlib, { recursive: true })
  cpSync(full.libpython, p.libpython)
  cpSync(join(fullRoot, 'include'), join(root, 'include'), { recursive: true })
  for (const name of readdirSync(full.stdlib)) {
    if (name.endsWith('.py')) cpSync(join(full.stdlib, name), join(p.stdlib, name))
  }
  for (const pkg of KEEP_PACKAGES) {
    cpSync(join(full.stdlib, pkg), join(p.stdlib, pkg), {
      recursive: true,
      filter: (src) => !src.endsWith('__pycache__'),
    })
  }
  mkdirSync(p.libDynload)
  mkdirSync(p.sitePackages)
  for (const name of readdirSync(full.libDynload)) {
    if (KEEP_EXTENSIONS.test(name)) cpSync(join(full.libDynload, name), join(p.libDynload, name))
  }
  const manifest = JSON.parse(readFileSync(full.manifest, 'utf8')) as Record<string, unknown>
  delete manifest.sha256
  writeFileSync(p.manifest, JSON.stringify({ ...manifest, packages: [], source: 'test:small' }))
  const file = join(release, archiveName(version, PLATFORM))
  const { sha256, size } = await packTree(root, file)
  const small: ArchiveManifest = {
    version,
    minor: MINOR,
    platform: PLATFORM,
    file: archiveName(version, PLATFORM),
    sha256,
    size,
    packages: [],
  }
  writeArchiveManifests(release, small)
  rmSync(work, { recursive: true, force: true })
  return small
}

export function tempDir(prefix = 'vis-dist-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export function sha256(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex')
}

// Modes (the first path segment):
//   ok        serves the release as published
//   badsha    the manifest claims a different sha256
//   truncated a half archive whose manifest matches it (tar must fail)
//   cut       the archive connection drops halfway through
//   noarchive the manifest is there, the archive 404s
//   slow      the archive trickles (64 KiB every 40 ms), for kills mid-download
// Anything else is a 404.
export type ReleaseServer = { url: (mode: string) => string; close: () => Promise<void>; hits: string[] }

export async function startReleaseServer(release: string, small: ArchiveManifest): Promise<ReleaseServer> {
  const archive = readFileSync(join(release, small.file))
  const half = archive.subarray(0, Math.floor(archive.length / 2))
  const hits: string[] = []
  const app = new Hono<{ Bindings: HttpBindings }>()
  const manifestFor = (mode: string): ArchiveManifest => {
    if (mode === 'badsha') return { ...small, sha256: 'f'.repeat(64) }
    if (mode === 'truncated') return { ...small, sha256: sha256(half), size: half.length }
    return small
  }
  app.get('/:mode/:name', (c) => {
    const { mode, name } = c.req.param()
    hits.push(`${mode}/${name}`)
    if (!['ok', 'badsha', 'truncated', 'cut', 'noarchive', 'slow'].includes(mode)) return c.notFound()
    if (name.endsWith('.json')) {
      if (name !== `cpython-${MINOR}-${PLATFORM}.json`) return c.notFound()
      return c.json(manifestFor(mode))
    }
    if (name !== small.file || mode === 'noarchive') return c.notFound()
    if (mode === 'truncated') return c.body(new Uint8Array(half), 200)
    if (mode === 'cut') {
      // Promise the whole archive, send half, then drop the connection.
      const res = c.env.outgoing
      res.writeHead(200, { 'content-length': String(archive.length) })
      res.write(half, () => res.destroy())
      return RESPONSE_ALREADY_SENT
    }
    if (mode === 'slow') {
      let at = 0
      let timer: NodeJS.Timeout | undefined
      const body = new ReadableStream<Uint8Array>({
        pull(ctrl) {
          return new Promise<void>((resolve) => {
            timer = setTimeout(() => {
              const chunk = archive.subarray(at, at + 64 * 1024)
              at += chunk.length
              if (chunk.length) ctrl.enqueue(new Uint8Array(chunk))
              if (at >= archive.length) ctrl.close()
              resolve()
            }, 40)
          })
        },
        cancel() {
          clearTimeout(timer)
        },
      })
      return new Response(body, { headers: { 'content-length': String(archive.length) } })
    }
    return c.body(new Uint8Array(archive), 200, { 'content-length': String(archive.length) })
  })
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s))
  })
  const port = (server.address() as AddressInfo).port
  return {
    url: (mode) => `http://127.0.0.1:${port}/${mode}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        ;(server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.()
        server.close(() => resolve())
      }),
  }
}

// A port nothing listens on (bound, then released).
export async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net')
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))
  const port = (s.address() as AddressInfo).port
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

const cliScript = join(repoRoot, 'test', 'distribution', 'run-cli.ts')

// Environment for a child `vis`: isolated home and staged dir, no inherited
// VIS_PYTHON_* settings, quick retries.
export function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, VIS_DOWNLOAD_RETRIES: '0' }
  for (const k of Object.keys(env)) if (k.startsWith('VIS_PYTHON_')) delete env[k]
  return { ...env, ...extra }
}

// A child's exit status, stdout and stderr, kept apart. Async on purpose: a server a test runs in
// this process (the release server) must keep serving while the child runs.
export function runCaptured(
  cmd: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => {
      stdout += d
    })
    child.stderr.on('data', (d) => {
      stderr += d
    })
    child.on('close', (code) => resolve({ status: code ?? -1, stdout, stderr }))
  })
}

export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ status: number; stdout: string; stderr: string }> {
  return runCaptured(process.execPath, ['--import', 'tsx', cliScript, ...args], { cwd: repoRoot, env })
}

// A child's exit status and its stdout and stderr as one text, in the order written.
export function runCollected(
  cmd: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ status: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env })
    let out = ''
    const collect = (d: Buffer) => {
      out += d
    }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    child.on('close', (code) => resolve({ status: code ?? -1, out }))
  })
}

export function spawnCli(args: string[], env: NodeJS.ProcessEnv) {
  // Its own process group, so a kill takes tar with it, as a crash would.
  return spawn(process.execPath, ['--import', 'tsx', cliScript, ...args], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
}

export function listDir(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : []
}

export function dirSize(file: string): number {
  return existsSync(file) ? statSync(file).size : 0
}
