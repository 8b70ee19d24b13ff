// The package as a new user gets it: packed, installed into an empty project on a PATH with
// no compiler, cmake, make, tar, strip or patchelf, CPython fetched per minor from a loopback
// release server (and, separately, from an offline bundle through file://). There, on 3.11,
// 3.12 and 3.13: a confined block with a tool call, an interrupt, and a session restored after
// the host restarts. Needs what .ci/run makes: `npm run prebuildify` with the three minors
// staged (cpython-dist/archives). Prints the figures for the release note.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import {
  copyFileSync,
  cpSync,
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { delimiter, join } from 'node:path'
import { after, before, test } from 'node:test'
import type { BundleManifest } from '../../src/bundle/manifest.js'
import { PREBUILT_ADDON_FILE } from '../../src/native/locate.js'
import { compileGuestBytecode, pycPath } from '../../src/worker/guest-bytecode.js'
import { pythonHome } from '../../src/worker/python-home.js'
import { needs } from '../helpers/needs.js'
import { repoRoot, tempDir } from './helpers.js'

const MINORS = ['3.11', '3.12', '3.13']
const TUPLE = `${process.platform}-${process.arch}`
// What the no-compiler PATH offers: enough to run npm and the jail, nothing to build with.
const TOOLS = ['node', 'npm', 'npx', 'sh', 'bwrap']
const FORBIDDEN = ['cc', 'c++', 'gcc', 'g++', 'cmake', 'make', 'tar', 'strip', 'patchelf', 'ld']

type Run = { status: number; out: string; ms: number }

// Async, so the release server in this process keeps serving while npm and node run.
function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Run> {
  const t0 = Date.now()
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env })
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      out += d
    })
    child.on('close', (code) => resolve({ status: code ?? -1, out, ms: Date.now() - t0 }))
    child.on('error', (err) => resolve({ status: -1, out: String(err), ms: Date.now() - t0 }))
  })
}

function which(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    const p = join(dir, name)
    if (dir && existsSync(p)) return p
  }
  return undefined
}

function du(path: string): number {
  const st = statSync(path, { throwIfNoEntry: false })
  if (!st) return 0
  if (!st.isDirectory()) return st.size
  let n = 0
  for (const name of readdirSync(path)) {
    const p = join(path, name)
    const s = statSync(p, { throwIfNoEntry: false })
    if (s?.isDirectory()) n += du(p)
    else if (s?.isFile()) n += s.size
  }
  return n
}

const mb = (n: number) => `${(n / 1048576).toFixed(2)} MB`
const figures: string[] = []

let work: string
let bundle: string
let manifest: BundleManifest
let toolPath: string
let baseEnv: NodeJS.ProcessEnv

// A fresh checkout has 3.11 staged and no prebuilds: this file then skips, saying what provides them.
const unprebuilt = MINORS.filter(
  (minor) =>
    !existsSync(
      join(repoRoot, 'prebuilds', `vis_py${minor.replace('.', '')}`, 'prebuilds', TUPLE, PREBUILT_ADDON_FILE),
    ),
)
const skip = needs(
  unprebuilt.length === 0,
  `the prebuilds for Python ${unprebuilt.join(', ')} (each minor staged from its CPython, e.g. pyenv's)`,
  'npm run release:pack',
)

before(async () => {
  if (skip) return
  work = tempDir('vis-install-')
  // The no-compiler PATH: symlinks to exactly the tools a consumer needs.
  const bin = join(work, 'bin')
  mkdirSync(bin)
  for (const t of TOOLS) {
    const found = which(t, process.env.PATH ?? '')
    assert.ok(found, `${t} is needed on PATH for this test`)
    symlinkSync(realpathSync(found), join(bin, t))
  }
  toolPath = bin
  for (const t of FORBIDDEN) assert.equal(which(t, toolPath), undefined, `${t} must not be on the test PATH`)
  // Nothing inherited that would point the runtime elsewhere.
  baseEnv = { ...process.env }
  for (const k of Object.keys(baseEnv)) if (k.startsWith('VIS_') || k.startsWith('npm_')) delete baseEnv[k]

  // The checkout's guest bytecode exists before packing, as it does once any worker has started
  // from it: the tarball must leave it out (it is this machine's, not the consumer's).
  const py = await pythonHome(MINORS[0] as string)
  assert.notEqual((await compileGuestBytecode(join(repoRoot, 'vis-guest'), py)).state, 'failed')
  assert.ok(existsSync(pycPath(join(repoRoot, 'vis-guest', 'vis_guest', 'api.py'), py.minor)))

  // The bundle: `npm pack` of this checkout (with its prebuilds), its dependencies, the archives.
  // CI gives the tarball `npm run release:pack` made (VIS_TEST_RELEASE_TARBALL, test-only), so
  // the release's own tarball is what installs here with no compiler, and nothing packs twice.
  bundle = join(work, 'bundle')
  const release = process.env.VIS_TEST_RELEASE_TARBALL
  const made = await run(
    process.execPath,
    [
      join(repoRoot, 'bin', 'vis.js'),
      'bundle',
      '--python',
      MINORS.join(','),
      '--out',
      bundle,
      ...(release ? ['--tarball', release] : []),
    ],
    { cwd: repoRoot, env: baseEnv },
  )
  assert.equal(made.status, 0, made.out)
  manifest = JSON.parse(readFileSync(join(bundle, 'bundle.json'), 'utf8')) as BundleManifest
  figures.push(`bundle: ${mb(du(bundle))} in ${manifest.files.length} files, made in ${made.ms} ms`)
  figures.push(
    `package tarball ${manifest.package.tarball}: ${mb(statSync(join(bundle, manifest.package.tarball)).size)}`,
  )
  for (const f of JSON.parse(readFileSync(join(repoRoot, 'prebuilds', 'manifest.json'), 'utf8')).files as {
    path: string
    size: number
  }[]) {
    figures.push(`prebuild ${f.path}: ${(f.size / 1024).toFixed(0)} KiB`)
  }
  for (const p of manifest.python) {
    const size = statSync(join(bundle, p.archive)).size
    figures.push(`CPython ${p.version} archive: ${mb(size)}`)
    assert.ok(size <= 15 * 1048576, `${p.archive} is ${mb(size)}, over 15 MB`)
  }
})

after(() => {
  if (skip) return
  console.log(`# figures\n${figures.map((f) => `#   ${f}`).join('\n')}`)
  if (work) rmSync(work, { recursive: true, force: true })
})

// A static server for the release directory that records every request.
async function releaseServer(dir: string): Promise<{ url: string; hits: string[]; server: Server }> {
  const hits: string[] = []
  const server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '/').slice(1))
    hits.push(name)
    const file = join(dir, name)
    if (name.includes('/') || !existsSync(file)) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-length': statSync(file).size })
    createReadStream(file).pipe(res)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server }
}

type ConsumerLine = {
  minor: string
  firstResultAt: number
  first: string
  firstError: unknown
  secret: string
  shell: string
  shellError: unknown
  interrupt: { landed: boolean }
  interruptedError: string
  defError: unknown
  restored: number
  restoredError: unknown
  restoreEvents: string[]
}

// The consumer script's checks, per minor.
function assertConsumer(out: string): ConsumerLine[] {
  const lines = out
    .split('\n')
    .filter((l) => l.startsWith('{"minor"'))
    .map((l) => JSON.parse(l) as ConsumerLine)
  assert.deepEqual(
    lines.map((l) => l.minor),
    MINORS,
    out,
  )
  for (const l of lines) {
    assert.equal(l.firstError, null, JSON.stringify(l))
    assert.equal(l.first, `${l.minor} True\n`, 'the block ran on its minor and the cat tool answered')
    assert.equal(l.secret, 'PermissionError\n', 'a file outside the session root is out of reach')
    assert.equal(l.shellError, null, JSON.stringify(l.shellError))
    assert.equal(l.shell, '0 jailed\nhello from the host\n\n', 'a jailed shell ran in the root')
    assert.equal(l.interrupt.landed, true)
    assert.equal(l.interruptedError, 'block.interrupted')
    assert.equal(l.defError, null)
    assert.equal(l.restored, 42, JSON.stringify(l.restoredError))
    assert.equal(l.restoreEvents[0], 'defs.restored')
  }
  return lines
}

function newProject(name: string): string {
  const dir = join(work, name)
  mkdirSync(dir)
  writeFileSync(join(dir, 'package.json'), `{"name":"${name}","version":"1.0.0","private":true}\n`)
  copyFileSync(join(repoRoot, 'test', 'distribution', 'consumer', 'consumer.mjs'), join(dir, 'consumer.mjs'))
  return dir
}

// A ```ts block of README.md: the first after `heading` that contains `marker`.
function readmeSnippet(heading: string, marker: string): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
  const from = readme.indexOf(heading)
  assert.ok(from >= 0, `README.md has no "${heading}"`)
  for (const m of readme.slice(from).matchAll(/```ts\n([\s\S]*?)```/g)) {
    if (m[1]!.includes(marker)) return m[1]!
  }
  assert.fail(`no ts block with ${marker} after "${heading}" in README.md`)
}

// Every process whose command line names dir (a worker's bwrap and node name the package's path).
function processesUnder(dir: string): string[] {
  const found: string[] = []
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
      if (cmd.includes(dir)) found.push(`${pid} ${cmd.slice(0, 200)}`)
    } catch {
      // gone meanwhile
    }
  }
  return found
}

async function until<T>(what: string, ms: number, probe: () => T | undefined): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = probe()
    if (v !== undefined) return v
    if (Date.now() > end) assert.fail(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

// The installed `vis serve` as a user starts it: where it listens and the token on stdout, a
// block served end to end over HTTP, then Ctrl-C (SIGINT to its process group) stops it with
// exit 0 and no worker left behind.
async function serveAndInterrupt(project: string, env: NodeJS.ProcessEnv, minor: string): Promise<void> {
  const vis = join(project, 'node_modules', '.bin', 'vis')
  const child = spawn(vis, ['serve', '--port', '0', '--python', minor], { cwd: project, env, detached: true })
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  child.stderr.on('data', (d) => {
    out += d
  })
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  try {
    await until('vis serve to print its URL', 120_000, () => (/^try: /m.test(out) ? true : undefined))
    const url = /^vis serving (http:\/\/127\.0\.0\.1:\d+) /m.exec(out)?.[1]
    const token = /^open: http:\/\/127\.0\.0\.1:\d+\/\?token=([\w-]{40,})$/m.exec(out)?.[1]
    assert.ok(url && token, out)
    assert.ok(out.includes(`-H "Authorization: Bearer ${token}"`), 'the curl example carries the token')
    const call = async (path: string, body: unknown) => {
      const res = await fetch(url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return { status: res.status, body: (await res.json()) as Record<string, unknown> }
    }
    const denied = await fetch(`${url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    assert.equal(denied.status, 401, 'no token, no session')
    const session = await call('/v1/sessions', {})
    assert.equal(session.status, 201, JSON.stringify(session.body))
    const blocks = `/v1/sessions/${session.body.id}/blocks`
    const first = await call(blocks, { code: 'import sys\nv = "%d.%d" % sys.version_info[:2]\nv' })
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.equal(first.body.result, minor)
    const second = await call(blocks, { code: 'print(v, 6 * 7)' })
    assert.equal(second.body.stdout, `${minor} 42\n`, 'globals persist across blocks')
    const pkg = join(project, 'node_modules', 'vis-runtime')
    assert.ok(processesUnder(pkg).length > 0, 'a worker runs from the installed package')
    process.kill(-child.pid!, 'SIGINT')
    assert.equal(await exited, 0, out)
    assert.match(out, /vis serve: SIGINT, stopping/)
    await until('the workers to exit', 30_000, () => (processesUnder(pkg).length === 0 ? true : undefined))
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL')
  }
}

test('from the registry, CPython from a loopback server, no compiler on PATH', {
  timeout: 900_000,
  skip,
}, async () => {
  const project = newProject('from-registry')
  const cache = join(work, 'npm-cache-registry')
  // The allowance: better-sqlite3's own prebuilt binary lives on a host these machines cannot
  // reach. Standing in for that download, its binary as this checkout built it goes where
  // prebuild-install keeps downloads (<cache>/_prebuilds, the file the bundle carries), so
  // it installs with no compiler too instead of compiling for minutes.
  const carried = join(bundle, 'npm-cache', '_prebuilds')
  assert.equal(
    readdirSync(carried).filter((n) => n.includes('better-sqlite3')).length,
    1,
    'the bundle carries it',
  )
  cpSync(carried, join(cache, '_prebuilds'), { recursive: true })

  const release = await releaseServer(join(bundle, 'cpython'))
  try {
    const env = {
      ...baseEnv,
      PATH: toolPath,
      VIS_HOME: join(project, 'home'),
      VIS_PYTHON_DIST_URL: release.url,
    }
    const tarball = join(bundle, manifest.package.tarball)
    const t0 = Date.now()
    const install = await run(
      'npm',
      ['install', tarball, '--cache', cache, '--no-audit', '--no-fund', '--foreground-scripts'],
      { cwd: project, env },
    )
    assert.equal(install.status, 0, install.out)
    figures.push(`npm install of the tarball (no compiler): ${install.ms} ms`)
    const pkg = join(project, 'node_modules', 'vis-runtime')
    // Compiled nothing: prebuilds matched, no cmake-js build tree appeared; better-sqlite3
    // took the binary from the download cache (no node-gyp object files).
    assert.deepEqual(readdirSync(join(project, 'node_modules', 'better-sqlite3', 'build', 'Release')), [
      'better_sqlite3.node',
    ])
    assert.match(
      install.out,
      /prebuilt native parts for linux-x64 \(Python 3\.11, 3\.12, 3\.13\); nothing to compile/,
    )
    assert.equal(existsSync(join(pkg, 'build')), false, 'no build/ directory in the installed package')
    assert.equal(
      existsSync(join(pkg, 'vis-guest', 'vis_guest', '__pycache__')),
      false,
      "the packer's guest bytecode is not in the tarball",
    )
    assert.ok(existsSync(join(pkg, 'dist', 'worker', 'child.cjs')), 'the worker bundle ships built')
    // The doctor summary ends the postinstall.
    assert.match(install.out, /system check \(`npx vis doctor` for details\):/)
    assert.match(install.out, /every confinement layer a session needs is available/)
    assert.match(install.out, /note {4}distribution: no CPython 3\.11 distribution staged, cached \(/)

    const consumer = await run(process.execPath, ['consumer.mjs', ...MINORS], { cwd: project, env })
    assert.equal(consumer.status, 0, consumer.out)
    const lines = assertConsumer(consumer.out)
    // The installed host compiled the guest's bytecode for each minor its workers ran.
    for (const m of MINORS) {
      const pyc = pycPath(join(pkg, 'vis-guest', 'vis_guest', 'api.py'), m)
      assert.ok(existsSync(pyc), `${pyc} was written by the installed host`)
    }
    figures.push(
      `npm install -> first block result (3.11, incl. CPython download): ${lines[0]!.firstResultAt - t0} ms`,
    )
    // Nothing but each minor's manifest and archive was asked of the release server.
    const expected = manifest.python.flatMap((p) => [
      `cpython-${p.minor}-${manifest.platform}.json`,
      p.archive.slice('cpython/'.length),
    ])
    assert.deepEqual(release.hits, expected)

    // The CLI as installed: npx finds it and it answers --help.
    const help = await run('npx', ['vis', '--help'], { cwd: project, env })
    assert.equal(help.status, 0, help.out)
    assert.match(help.out, /^ {2}serve +Serve the HTTP API/m)
    // README's library snippets as a TypeScript user compiles them (strict, the package's own
    // declarations checked too, so every type they import must come with the install); the
    // first one then runs as written, on a real workspace.
    const library = readmeSnippet('## Using it as a library', 'createRuntime')
    writeFileSync(
      join(project, 'readme-library.mts'),
      library
        .replace("'/path/to/workspace'", JSON.stringify(join(project, 'work')))
        .replace(/^(const r = .*)$/m, '$1\nconsole.log(JSON.stringify(r))'),
    )
    writeFileSync(join(project, 'readme-agent.mts'), readmeSnippet('## Agent turns', 'agentFor'))
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          strict: true,
          skipLibCheck: false,
          outDir: 'out',
        },
        files: ['readme-library.mts', 'readme-agent.mts'],
      }),
    )
    const tsc = await run(
      process.execPath,
      [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'],
      {
        cwd: project,
        env,
      },
    )
    assert.equal(tsc.status, 0, tsc.out)
    const snippet = await run(process.execPath, [join('out', 'readme-library.mjs')], { cwd: project, env })
    assert.equal(snippet.status, 0, snippet.out)
    assert.equal(snippet.out, '{"stdout":"<hi>\\n"}\n')
    await serveAndInterrupt(project, env, '3.12')
    // Installed with install scripts skipped (npm --ignore-scripts, pnpm's default), better-sqlite3
    // has no binary: what needs the database says so and what to run, not a dozen probed paths.
    const sqliteBinary = join(
      project,
      'node_modules',
      'better-sqlite3',
      'build',
      'Release',
      'better_sqlite3.node',
    )
    renameSync(sqliteBinary, `${sqliteBinary}.away`)
    try {
      const noDriver = await run(
        process.execPath,
        [join(project, 'node_modules', '.bin', 'vis'), 'sessions', 'list'],
        {
          cwd: project,
          env,
        },
      )
      assert.equal(noDriver.status, 1, noDriver.out)
      assert.match(
        noDriver.out,
        /better-sqlite3 \(SQLite's driver\) has no native binary, as its install script did not run/,
      )
      assert.match(noDriver.out, /Run `npm rebuild better-sqlite3` in your project .*\[db\.driver-missing\]/)
      assert.doesNotMatch(noDriver.out, /Could not locate the bindings file/)
    } finally {
      renameSync(`${sqliteBinary}.away`, sqliteBinary)
    }

    const pkgBytes = du(pkg)
    figures.push(
      `installed vis-runtime package: ${mb(pkgBytes)}; node_modules in all: ${mb(du(join(project, 'node_modules')))}`,
    )
    for (const p of manifest.python) {
      const tree = du(join(project, 'home', 'python', 'runtime', p.minor))
      figures.push(`installed footprint for Python ${p.minor}: CPython ${mb(tree)} + package ${mb(pkgBytes)}`)
    }

    // A prebuild for the wrong minor is refused unread, naming the file and what to do.
    const slot = join(pkg, 'prebuilds', 'vis_py311', 'prebuilds', TUPLE, PREBUILT_ADDON_FILE)
    copyFileSync(join(pkg, 'prebuilds', 'vis_py312', 'prebuilds', TUPLE, PREBUILT_ADDON_FILE), slot)
    const wrong = await run(process.execPath, [join(pkg, 'bin', 'vis.js'), 'python', '-c', 'print(1)'], {
      cwd: project,
      env: { ...env, VIS_PYTHON_VERSION: '3.11' },
    })
    assert.equal(wrong.status, 1, wrong.out)
    assert.ok(
      wrong.out.includes(
        `${slot} is the runtime addon for Python 3.12, but it stands where the one for Python 3.11 belongs`,
      ),
      wrong.out,
    )
    assert.match(wrong.out, /reinstall vis-runtime .*\[native\.version-mismatch\]/)
  } finally {
    release.server.close()
  }
})

test('from the offline bundle: no registry, no network, no compiler, CPython through file://', {
  timeout: 900_000,
  skip,
}, async () => {
  const project = newProject('from-bundle')
  // README.txt checks the kit with its own verify.mjs (never `npx vis`, which would fetch the
  // registry's unrelated `vis` before the install) and says to copy it off read-only media.
  const readmeTxt = readFileSync(join(bundle, 'README.txt'), 'utf8')
  assert.ok(readmeTxt.includes('node "$B/verify.mjs"'), readmeTxt)
  assert.ok(readmeTxt.indexOf('node "$B/verify.mjs"') < readmeTxt.indexOf('npm install --offline'))
  assert.match(readmeTxt, /On read-only media .* Copy this whole directory to a writable disk first/s)
  const selfCheck = await run(process.execPath, [join(bundle, 'verify.mjs')], { cwd: work, env: baseEnv })
  assert.equal(selfCheck.status, 0, selfCheck.out)
  assert.match(selfCheck.out, new RegExp(`${manifest.files.length} files intact`))
  // A private copy of the bundle's cache (npm writes logs and indexes into its cache); every
  // network attempt would go to a closed proxy port and fail.
  const cache = join(work, 'npm-cache-bundle')
  cpSync(join(bundle, 'npm-cache'), cache, { recursive: true })
  const env = {
    ...baseEnv,
    PATH: toolPath,
    VIS_HOME: join(project, 'home'),
    VIS_PYTHON_DIST_URL: `file://${join(bundle, 'cpython')}`,
  }
  const offline = ['--offline', '--proxy', 'http://127.0.0.1:9', '--https-proxy', 'http://127.0.0.1:9']
  const t0 = Date.now()
  const install = await run(
    'npm',
    [
      'install',
      join(bundle, manifest.package.tarball),
      '--cache',
      cache,
      ...offline,
      '--no-audit',
      '--no-fund',
      '--foreground-scripts',
    ],
    { cwd: project, env },
  )
  assert.equal(install.status, 0, install.out)
  figures.push(`offline npm install from the bundle (everything, better-sqlite3 included): ${install.ms} ms`)
  assert.match(install.out, /nothing to compile/)
  // better-sqlite3 came from the binary the bundle carries: no node-gyp object files.
  const sqliteBuild = join(project, 'node_modules', 'better-sqlite3', 'build', 'Release')
  assert.deepEqual(readdirSync(sqliteBuild), ['better_sqlite3.node'])

  const consumer = await run(process.execPath, ['consumer.mjs', ...MINORS], { cwd: project, env })
  assert.equal(consumer.status, 0, consumer.out)
  const lines = assertConsumer(consumer.out)
  figures.push(`offline: npm install -> first block result (3.11): ${lines[0]!.firstResultAt - t0} ms`)
  for (const p of manifest.python) {
    const m = JSON.parse(
      readFileSync(
        join(project, 'home', 'python', 'runtime', p.minor, manifest.platform, 'python', 'vis-dist.json'),
        'utf8',
      ),
    )
    assert.equal(m.source, `download:file://${join(bundle, p.archive)}`)
  }

  // The manifest names every file; a changed or missing one is reported.
  const vis = join(project, 'node_modules', 'vis-runtime', 'bin', 'vis.js')
  const ok = await run(process.execPath, [vis, 'bundle', '--verify', bundle], { cwd: project, env })
  assert.equal(ok.status, 0, ok.out)
  assert.match(ok.out, new RegExp(`all ${manifest.files.length} files intact`))
  writeFileSync(join(bundle, 'README.txt'), 'edited\n')
  rmSync(join(bundle, 'cpython', `cpython-3.12-${manifest.platform}.json`))
  const bad = await run(process.execPath, [vis, 'bundle', '--verify', bundle], { cwd: project, env })
  assert.equal(bad.status, 1, bad.out)
  assert.match(bad.out, /BAD {2}README\.txt: sha256 [0-9a-f]{64}, the manifest says [0-9a-f]{64}/)
  assert.match(bad.out, /BAD {2}cpython\/cpython-3\.12-\S+\.json: missing/)
})
