// Attack (eleventh outsider pass; README, CPython distributions: "a download of a release archive from
// `VIS_PYTHON_DIST_URL`", and for offline machines `VIS_PYTHON_DIST_URL=file://DIR/cpython` of a
// `vis bundle` kit ("on read-only media, copy the kit to a writable disk first"); CPython is fetched per
// minor on first use). Every OTHER place the host takes a CPython from is protected when it lies in a root
// (SECURITY.md, Roots: `VIS_PYTHON_STAGED_DIR`, the per-user cache, `VIS_PYTHON_CHECKOUT`,
// `VIS_PYTHON_HOME`, `VIS_ADDON_DIR`: bound read-only, refused to the host tools, used only from a home the
// live-jail guard opens). A `file://` kit is not: src/distribution/fetch.ts reads
// `<DIR>/cpython-<minor>-<platform>.json` and the archive it names (the sha256 comes from that same json),
// unpacks it into the per-user cache, and the host then runs the tree's interpreter itself
// (src/worker/guest-bytecode.ts: `bin/python3.X -I -S -m compileall` on the package's vis-guest, on the
// host, before any jail; a published package carries no bytecode, so every minor's first use compiles).
// A kit kept in a workspace (or under `~`, with a session rooted there) is written by a block: it replaces
// the json and archive of a minor not fetched yet, and the host's first use of that minor runs the block's
// program, unconfined, as the user.
//
// Reproduction (private HOME, so the per-user cache is the test's): an installed package staged with 3.11
// only; VIS_PYTHON_DIST_URL=file://R/kit/cpython; a 3.11 session on R writes a tar.gz of a tree that
// passes validateTree (vis-dist.json, os.py, encodings, a libpython file, bin/python3.12 = a shell script
// writing a marker outside every root) and its json. While that session lives, the host creates a 3.12
// runtime and runs a block:
// the marker appears. A fix: refuse a `file://` source inside a live root (and bind it read-only in jails,
// like the other distribution places); at least never run a fetched tree on the host before a person
// vetted its source.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { hostFixture, installedPackage, needsBuiltPackage } from './installed-package.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

// The published package carries no bytecode ("!vis-guest/**/__pycache__" in package.json's files).
function dropBytecode(dir: string): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (!statSync(p).isDirectory()) continue
    if (name === '__pycache__') rmSync(p, { recursive: true, force: true })
    else dropBytecode(p)
  }
}

test('a block cannot replace the CPython of an offline kit in its root that the host fetches and runs', () => {
  needsBuiltPackage()
  const { root: R, pkg, marker } = installedPackage('dist-kit', 'npm')
  dropBytecode(join(pkg, 'vis-guest'))
  const H = mkdtempSync(join(tmpdir(), 'vis-attack-dist-kit-user-'))
  const W = mkdtempSync(join(tmpdir(), 'vis-attack-dist-kit-w-'))
  made.push(H, W)
  mkdirSync(join(R, 'kit', 'cpython'), { recursive: true })
  const r = spawnSync(process.execPath, [hostFixture('dist-kit-host.mjs'), pkg, R, W, marker], {
    cwd: H,
    env: {
      ...process.env,
      HOME: H,
      VIS_HOME: join(H, '.vis'),
      VIS_PYTHON_DIST_URL: `file://${join(R, 'kit', 'cpython')}`,
      VIS_PYTHON_STAGED_DIR: join(pkg, 'cpython-dist'),
    },
    encoding: 'utf8',
    timeout: 240_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' ')
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `a block rewrote the offline kit's 3.12 archive and json inside its root, and the host's first use of 3.12 ` +
      `fetched it and ran its interpreter outside every jail: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 400)})`,
  )
})
