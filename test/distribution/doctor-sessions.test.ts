// `vis doctor` checks what sessions need, each case made real: a package whose SQLite driver
// has no native binary (as after --ignore-scripts), a home on a read-only mount and a home the
// user may not write (run as `nobody`: root ignores permission bits), a selected minor with no
// runtime addon, and the first-use download location answering, refusing, or accepting and
// never answering. Every command turns the unwritable home into one line. Runs the built CLI
// (dist/), so `npm run build` first.
import assert from 'node:assert/strict'
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { createServer as createNetServer } from 'node:net'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { DOWNLOAD_PROBE_MS } from '../../src/cli/commands/doctor-sessions.js'
import { addonFile } from '../../src/native/addon.js'
import { needs } from '../helpers/needs.js'
import { closedPort, PLATFORM, repoRoot, runCaptured, tempDir } from './helpers.js'

type Check = { id: string; level: string; message: string }
type Run = { status: number; stdout: string; stderr: string; ms: number }

async function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const t0 = Date.now()
  const r = await runCaptured(cmd, args, { cwd: '/', env })
  return { ...r, ms: Date.now() - t0 }
}

// The environment of a fresh user: nothing inherited that points vis elsewhere.
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, VIS_DOWNLOAD_RETRIES: '0' }
  for (const k of Object.keys(e)) if (k.startsWith('VIS_') && k !== 'VIS_DOWNLOAD_RETRIES') delete e[k]
  return { ...e, ...extra }
}

const vis = (root: string) => join(root, 'bin', 'vis.js')

function checks(r: Run): Check[] {
  return (JSON.parse(r.stdout) as { checks: Check[] }).checks
}

function only(r: Run, id: string): Check {
  const found = checks(r).filter((c) => c.id === id)
  assert.equal(found.length, 1, `${id}: ${JSON.stringify(checks(r))}`)
  return found[0] as Check
}

// A copy of the package as an install lays it out, minus what a case takes away: dist/ and
// bin/ copied (Node resolves a module's imports from its real path), the rest linked.
function fakePackage(opts: { noDriver?: boolean; dropBuilt?: string[] }): string {
  const root = join(tempDir('vis-doctor-pkg-'), 'vis-runtime')
  mkdirSync(root)
  for (const name of ['dist', 'bin']) cpSync(join(repoRoot, name), join(root, name), { recursive: true })
  cpSync(join(repoRoot, 'package.json'), join(root, 'package.json'))
  for (const name of ['vis-guest', 'cpython-dist', 'web']) symlinkSync(join(repoRoot, name), join(root, name))
  // No prebuilds/: the local build is the only place the native parts are found.
  const release = join(root, 'build', 'Release')
  mkdirSync(release, { recursive: true })
  for (const name of readdirSync(join(repoRoot, 'build', 'Release'))) {
    if (!opts.dropBuilt?.includes(name))
      symlinkSync(join(repoRoot, 'build', 'Release', name), join(release, name))
  }
  const modules = join(root, 'node_modules')
  mkdirSync(modules)
  for (const name of readdirSync(join(repoRoot, 'node_modules'))) {
    const from = join(repoRoot, 'node_modules', name)
    if (name === 'better-sqlite3' && opts.noDriver) {
      // Its JavaScript without the binary its install script would have written.
      cpSync(from, join(modules, name), {
        recursive: true,
        filter: (src) => !/\/better-sqlite3\/(build|deps|src)(\/|$)/.test(src),
      })
    } else symlinkSync(from, join(modules, name))
  }
  return root
}

let home: string
let noStaged: string
let released: { json: string; size: number; version: string }

before(() => {
  home = join(tempDir('vis-doctor-home-'), 'home')
  noStaged = tempDir('vis-doctor-nostaged-')
  chmodSync(noStaged, 0o755) // nobody reads it too
  const json = readFileSync(
    join(repoRoot, 'cpython-dist', 'archives', `cpython-3.11-${PLATFORM}.json`),
    'utf8',
  )
  const m = JSON.parse(json) as { size: number; version: string }
  released = { json, size: m.size, version: m.version }
})

const servers: { close(): void }[] = []
after(() => {
  for (const s of servers) s.close()
})

test('doctor: the SQLite driver that does not load is a FAIL naming the fix; a loading one is ok', async () => {
  const good = await run(process.execPath, [vis(repoRoot), 'doctor', '--json'], env({ VIS_HOME: home }))
  assert.match(only(good, 'sqlite').message, /^better-sqlite3 loads \(SQLite 3\.\d+/)
  assert.equal(only(good, 'sqlite').level, 'info')

  const pkg = fakePackage({ noDriver: true })
  const json = await run(process.execPath, [vis(pkg), 'doctor', '--json'], env({ VIS_HOME: home }))
  const c = only(json, 'sqlite')
  assert.equal(c.level, 'error')
  assert.equal(
    c.message,
    "better-sqlite3 (SQLite's driver) does not load: it has no native binary; sessions cannot be stored",
  )
  assert.equal(json.status, 2)
  const text = await run(process.execPath, [vis(pkg), 'doctor'], env({ VIS_HOME: home }))
  assert.match(text.stdout, /^FAIL {2}sqlite +better-sqlite3 \(SQLite's driver\) does not load/m)
  assert.match(text.stdout, /errors above: sessions cannot run until they are fixed/)
  assert.match(text.stdout, /fix: `npm rebuild better-sqlite3` in your project/)
})

test('doctor: a selected minor with no runtime addon is a WARN; the minors that have one load', {
  skip: needs(
    addonFile('vis_py312') !== undefined,
    'the Python 3.12 runtime addon',
    'node bin/vis.js runtime stage --python 3.12 && npm run build:addon',
  ),
}, async () => {
  const pkg = fakePackage({ dropBuilt: ['vis_py311.node'] })
  const r = await run(
    process.execPath,
    [vis(pkg), 'doctor', '--json'],
    env({ VIS_HOME: home, VIS_PYTHON_VERSION: '3.11' }),
  )
  const missing = only(r, 'addon.3.11')
  assert.equal(missing.level, 'warn')
  assert.match(
    missing.message,
    /^no runtime addon for Python 3\.11 \(vis_py311\.node\); reinstall vis-runtime/,
  )
  const other = only(r, 'addon.3.12')
  assert.equal(other.level, 'info', other.message)
  assert.match(other.message, /^the runtime addon for Python 3\.12 loads: /)
  // The text report says what fails until it is fixed.
  const text = await run(
    process.execPath,
    [vis(pkg), 'doctor'],
    env({ VIS_HOME: home, VIS_PYTHON_VERSION: '3.11' }),
  )
  assert.match(text.stdout, /^WARN {2}addon\.3\.11 +no runtime addon for Python 3\.11/m)
  assert.match(text.stdout, /until then: sessions on Python 3\.11 fail to start \(native\.addon-missing\)/)
})

// Runs `node bin/vis.js ARGS` with HOME on a read-only bind mount of a fresh directory.
function onReadOnlyHome(args: string[], extra: Record<string, string> = {}): Promise<Run & { home: string }> {
  const ro = tempDir('vis-doctor-ro-')
  const script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"'
  return run(
    'unshare',
    ['-m', 'sh', '-c', script, 'sh', ro, process.execPath, vis(repoRoot), ...args],
    env({ HOME: ro, ...extra }),
  ).then((r) => ({ ...r, home: ro }))
}

// As user nobody, whose HOME is root's 0755 directory: EACCES, the permission bits.
function asNobody(args: string[], extra: Record<string, string> = {}): Promise<Run & { home: string }> {
  const owned = tempDir('vis-doctor-perm-')
  chmodSync(owned, 0o755)
  const tmp = tempDir('vis-doctor-tmp-')
  chmodSync(tmp, 0o1777)
  return run(
    'setpriv',
    ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, vis(repoRoot), ...args],
    env({ HOME: owned, TMPDIR: tmp, ...extra }),
  ).then((r) => ({ ...r, home: owned }))
}

test('doctor: a home on a read-only mount is a FAIL naming EROFS and VIS_HOME', async () => {
  const r = await onReadOnlyHome(['doctor', '--json'])
  const c = only(r, 'home')
  assert.equal(c.level, 'error')
  assert.equal(
    c.message,
    `the vis home ${r.home}/.vis (at ${r.home}) is not writable: EROFS (read-only file system); set VIS_HOME to a writable directory`,
  )
  assert.equal(r.status, 2)
  // A writable VIS_HOME is the way out, as the message says.
  const moved = await onReadOnlyHome(['doctor', '--json'], { VIS_HOME: join(tempDir(), 'h') })
  assert.equal(only(moved, 'home').level, 'info')
})

test('doctor: a home the user may not write is a FAIL naming EACCES (run as nobody)', async () => {
  const r = await asNobody(['doctor', '--json'])
  const c = only(r, 'home')
  assert.equal(c.level, 'error', r.stderr)
  assert.equal(
    c.message,
    `the vis home ${r.home}/.vis (at ${r.home}) is not writable: EACCES (permission denied); set VIS_HOME to a writable directory`,
  )
})

test('every command turns an unwritable home into one line naming the path, the errno and VIS_HOME', async () => {
  const line = (home: string, errno: string) =>
    new RegExp(
      `(^|\\n)vis [a-z]+: the vis home ${home}/\\.vis \\(at ${home}\\) is not writable: ${errno} \\([a-z -]+\\); set VIS_HOME to a writable directory \\[home\\.unwritable\\]\\n$`,
    )
  const offline = {
    VIS_PYTHON_STAGED_DIR: noStaged,
    VIS_PYTHON_DIST_URL: `file://${join(repoRoot, 'cpython-dist', 'archives')}`,
  }
  for (const args of [
    ['sessions', 'list'],
    ['sessions', 'show', 'nope'],
    ['runtime', 'fetch', '--python', '3.11'],
    ['python', '-c', 'pass'],
  ]) {
    const ro = await onReadOnlyHome(args, offline)
    assert.equal(ro.status, 1, `${args.join(' ')}: ${ro.stderr}`)
    // Progress lines may come first (`runtime fetch` reads the manifest); the failure is one line.
    assert.match(ro.stderr, line(ro.home, 'EROFS'), args.join(' '))
    assert.doesNotMatch(ro.stderr, /\n\s+at |ENOENT/, args.join(' '))
    const perm = await asNobody(args, offline)
    assert.equal(perm.status, 1, `${args.join(' ')}: ${perm.stderr}`)
    assert.match(perm.stderr, line(perm.home, 'EACCES'), args.join(' '))
    assert.doesNotMatch(perm.stderr, /\n\s+at /, args.join(' '))
  }
})

test('doctor: with no CPython here yet, whether its download answers and how big it is, within a bound', async () => {
  const served = createServer((req, res) => {
    if (req.url === `/rel/cpython-3.11-${PLATFORM}.json`) res.end(released.json)
    else res.writeHead(404).end()
  })
  servers.push(served)
  await new Promise<void>((r) => served.listen(0, '127.0.0.1', () => r()))
  const at = `http://127.0.0.1:${(served.address() as AddressInfo).port}`
  const fresh = { VIS_HOME: join(tempDir(), 'home'), VIS_PYTHON_STAGED_DIR: noStaged }

  const answers = await run(
    process.execPath,
    [vis(repoRoot), 'doctor', '--json'],
    env({ ...fresh, VIS_PYTHON_DIST_URL: `${at}/rel` }),
  )
  const ok = only(answers, 'download')
  assert.equal(ok.level, 'info')
  const mb = (released.size / 1048576).toFixed(1)
  assert.match(
    ok.message,
    new RegExp(
      `^CPython ${released.version.replaceAll('.', '\\.')} would download on first use from ${at}/rel/cpython-3\\.11-${PLATFORM}\\.json: it answers \\(\\d+ ms\\); cpython-[^ ]+\\.tar\\.gz is ${mb.replace('.', '\\.')} MB$`,
    ),
  )

  const missing = await run(
    process.execPath,
    [vis(repoRoot), 'doctor', '--json'],
    env({ ...fresh, VIS_PYTHON_DIST_URL: `${at}/none` }),
  )
  assert.equal(only(missing, 'download').level, 'warn')
  assert.match(
    only(missing, 'download').message,
    /does not answer: could not download .*\/none\/.*: HTTP 404/,
  )

  const refused = await run(
    process.execPath,
    [vis(repoRoot), 'doctor', '--json'],
    env({ ...fresh, VIS_PYTHON_DIST_URL: `http://127.0.0.1:${await closedPort()}` }),
  )
  assert.match(only(refused, 'download').message, /does not answer: .*ECONNREFUSED/)

  // Accepts the connection and never answers: the probe gives up at its bound, not at 30 s.
  const held: Socket[] = []
  const silent = createNetServer((s) => held.push(s))
  servers.push({
    close: () => {
      silent.close()
      for (const s of held) s.destroy()
    },
  })
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()))
  const mute = await run(
    process.execPath,
    [vis(repoRoot), 'doctor', '--json'],
    env({ ...fresh, VIS_PYTHON_DIST_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` }),
  )
  assert.ok(held.length >= 1, 'the probe connected')
  const c = only(mute, 'download')
  assert.equal(c.level, 'warn')
  assert.match(c.message, new RegExp(`Timeout awaiting 'request' for ${DOWNLOAD_PROBE_MS}ms`))
  // The whole doctor (bubblewrap runs, the egress check) plus the probe's bound, with slack.
  assert.ok(mute.ms < answers.ms + DOWNLOAD_PROBE_MS + 5000, `doctor took ${mute.ms} ms`)
})
