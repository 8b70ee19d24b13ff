// issue 37 §1-2: what the release carries for linux-arm64, checked as the files they are: the
// cross-built prebuilds (aarch64 ELF, in node-gyp-build's layout), and the CPython 3.11 tree and
// archive staged from Debian's arm64 packages, whose interpreter runs under qemu-aarch64-static
// and imports the modules that need the libraries it carries in lib/deps.
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { MAX_ARCHIVE_BYTES } from '../../src/bundle/bundle.js'
import { archiveManifestName, stagedTreeRoot, treePaths } from '../../src/distribution/layout.js'
import { targetFor } from '../../src/distribution/platform.js'
import { PREBUILT_ADDON_FILE, prebuildPath } from '../../src/native/locate.js'
import { needs } from '../helpers/needs.js'
import { repoRoot } from './helpers.js'

const ARM = targetFor('linux-aarch64-gnu')
const dist = join(repoRoot, 'cpython-dist')
const tree = stagedTreeRoot(dist, '3.11', ARM.tag)
const EM_AARCH64 = 183
const machineOf = (f: string) => readFileSync(f).readUInt16LE(18)
const PARTS: [string, string][] = [
  ['vis_loader', PREBUILT_ADDON_FILE],
  ['vis_confine', PREBUILT_ADDON_FILE],
  ['vis_seccomp', 'libvis_seccomp.so'],
  ['vis-launcher', 'vis-launcher'],
  ['vis_py311', PREBUILT_ADDON_FILE],
]
const prebuilt = (part: string, file: string) => join(repoRoot, 'prebuilds', prebuildPath(part, file, ARM))

test('every native part has an aarch64 prebuild beside the x64 one, listed in the manifest', {
  skip: needs(
    PARTS.every(([p, f]) => existsSync(prebuilt(p, f))),
    'the arm64 prebuilds',
    'npm run release:pack',
  ),
}, () => {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'prebuilds', 'manifest.json'), 'utf8')) as {
    files: { part: string; platform: string; path: string; sha256: string; pythonMinor?: string }[]
  }
  for (const [part, file] of PARTS) {
    const f = prebuilt(part, file)
    assert.equal(machineOf(f), EM_AARCH64, `${f} is an aarch64 object`)
    const entry = manifest.files.find((e) => e.part === part && e.platform === 'linux-arm64')
    assert.ok(entry, `manifest lists ${part} for linux-arm64`)
    assert.equal(entry.sha256, createHash('sha256').update(readFileSync(f)).digest('hex'))
    // The x64 file of the same part is another file, for another machine.
    const x64 = join(repoRoot, 'prebuilds', prebuildPath(part, file, targetFor('linux-x86_64-gnu')))
    assert.equal(machineOf(x64), 62)
  }
  // The runtime addon carries its minor, as the x64 ones do; and no arm64 addon for minors it lacks.
  assert.ok(readFileSync(prebuilt('vis_py311', PREBUILT_ADDON_FILE)).includes('vis-python-minor=3.11;'))
  assert.ok(!existsSync(prebuilt('vis_py312', PREBUILT_ADDON_FILE)))
})

test('the aarch64 CPython 3.11 tree runs under emulation with the libraries it carries', {
  skip: needs(
    existsSync(join(tree, 'vis-dist.json')) &&
      spawnSync('sh', ['-c', 'command -v qemu-aarch64-static']).status === 0,
    'CPython 3.11 staged for linux-aarch64-gnu and qemu-user-static',
    'node bin/vis.js runtime stage --platform linux-aarch64-gnu',
  ),
  timeout: 120_000,
}, () => {
  const p = treePaths(tree, '3.11')
  const m = JSON.parse(readFileSync(p.manifest, 'utf8')) as {
    version: string
    platform: string
    libraries: string[]
  }
  assert.equal(m.platform, 'linux-aarch64-gnu')
  assert.match(m.version, /^3\.11\.\d+$/)
  for (const so of [
    'libssl.so.3',
    'libcrypto.so.3',
    'libffi.so.8',
    'libsqlite3.so.0',
    'liblzma.so.5',
    'libexpat.so.1',
  ])
    assert.ok(m.libraries.includes(so), `carries ${so}`)
  for (const f of [p.executable, p.libpython, join(p.lib, 'deps', 'libssl.so.3')])
    assert.equal(machineOf(f), EM_AARCH64)
  // The staged headers are the arm64 build's own pyconfig.h (not Debian's multiarch wrapper).
  assert.doesNotMatch(readFileSync(join(p.include, 'pyconfig.h'), 'utf8'), /#\s*include\s*<.*-linux-gnu/)
  // No .so of its own for dropped modules, no test modules.
  const dynload = readdirSync(p.libDynload)
  assert.ok(!dynload.some((n) => /^(_test|nis\.|_dbm\.)/.test(n)), dynload.join(' '))
  // Without -L or an arm64 libssl on the host: the tree's own deps answer, through its RUNPATHs.
  const probe =
    'import platform, ssl, sqlite3, ctypes, lzma, bz2, zlib, hashlib, decimal, json, sys\n' +
    'print(json.dumps({"m": platform.machine(), "v": sys.version.split()[0], "ssl": ssl.OPENSSL_VERSION, ' +
    '"sqlite": sqlite3.sqlite_version, "prefix": sys.prefix, "sha": hashlib.sha256(b"x").hexdigest()[:8]}))'
  const out = JSON.parse(
    execFileSync('qemu-aarch64-static', [p.executable, '-I', '-c', probe], {
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin' },
    }),
  )
  assert.equal(out.m, 'aarch64')
  assert.equal(out.v, m.version)
  assert.match(out.ssl, /^OpenSSL 3\./)
  assert.equal(out.prefix, tree)
  assert.equal(out.sha, '2d711642')
})

test('the aarch64 archive matches its sha256 manifest and fits a bundle', {
  skip: needs(
    existsSync(join(dist, 'archives', archiveManifestName('3.11', ARM.tag))),
    'the linux-aarch64-gnu CPython archive',
    'node bin/vis.js runtime stage --platform linux-aarch64-gnu',
  ),
}, () => {
  const m = JSON.parse(
    readFileSync(join(dist, 'archives', archiveManifestName('3.11', ARM.tag)), 'utf8'),
  ) as {
    file: string
    sha256: string
    size: number
    platform: string
  }
  assert.equal(m.platform, ARM.tag)
  const file = join(dist, 'archives', m.file)
  assert.equal(statSync(file).size, m.size)
  assert.equal(createHash('sha256').update(readFileSync(file)).digest('hex'), m.sha256)
  assert.ok(m.size < MAX_ARCHIVE_BYTES, `${m.size} bytes`)
})

test('staging another minor for arm64 is refused, naming the one it supports', async () => {
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      join(repoRoot, 'test', 'distribution', 'run-cli.ts'),
      'runtime',
      'stage',
      '--platform',
      'linux-aarch64-gnu',
      '--python',
      '3.12',
      '--out',
      '/nonexistent-vis-out',
    ],
    { encoding: 'utf8', cwd: repoRoot },
  )
  assert.notEqual(r.status, 0)
  assert.match(r.stderr, /Python 3\.12 is not supported on linux-aarch64-gnu \(3\.11 is\).*\[dist\.stage\]/)
})
