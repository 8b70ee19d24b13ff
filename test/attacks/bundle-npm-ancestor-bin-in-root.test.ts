// Attack (eighteenth outsider pass; surface 3: `vis bundle`'s npm, src/bundle/npm.ts). Since the
// fourteenth pass npm gets `--prefix <cwd>` so it reads no project .npmrc from a parent workspace, and the
// package's enclosing node_modules are bound read-only in every jail. But npm's run-script (the prepack
// script `vis bundle`'s `npm pack` runs on the host) puts `node_modules/.bin` of EVERY ancestor of the
// package on the script's PATH, ahead of the host's PATH (@npmcli/run-script set-path.js), and the
// prepack script is `node scripts/prepack.mjs`. A checkout at R/tools/vis-runtime with a session on R
// (the package itself read-only in the jail): the block writes R/node_modules/.bin/node (no such folder
// existed, so none was bound read-only), and `vis bundle` runs it as `node` on the host, unconfined.
//
// Reproduction: this checkout's built package copied to R/tools/vis-runtime (its dependencies linked) and a
// host run from there: a session on R whose block finds the package read-only (the control) and writes
// R/node_modules/.bin/node (appending to a marker outside R); then packPackage(packageRoot, out), as
// `vis bundle` does. Expected: the block's program never runs; the marker is never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { needsBuiltPackage } from './installed-package.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-bundle-ancestor-bin-'))
after(() => rmSync(base, { recursive: true, force: true }))
const repo = join(import.meta.dirname, '..', '..')

test("vis bundle's npm does not run a program a block wrote in an ancestor's node_modules/.bin", () => {
  needsBuiltPackage()
  const R = join(base, 'projects')
  const pkg = join(R, 'tools', 'vis-runtime')
  const home = join(base, 'vis-home')
  const out = join(base, 'out')
  const outside = join(base, 'outside')
  for (const d of [pkg, home, out, outside]) mkdirSync(d, { recursive: true })
  // A checkout as a developer has it, built: the package's files, the staged CPython, its node_modules.
  for (const d of [
    'bin',
    'dist',
    'vis-guest',
    'web',
    'build',
    'prebuilds',
    'package.json',
    'cpython-dist/3.11',
  ])
    if (existsSync(join(repo, d)))
      cpSync(join(repo, d), join(pkg, d), { recursive: true, verbatimSymlinks: true })
  mkdirSync(join(pkg, 'node_modules'))
  // The two modules the worker loads in the jail are real copies (the jail binds the package, not
  // what a link in it leads to); the rest are linked.
  for (const name of readdirSync(join(repo, 'node_modules'))) {
    const from = join(repo, 'node_modules', name)
    if (name === 'zod' || name === 'node-gyp-build')
      cpSync(from, join(pkg, 'node_modules', name), { recursive: true, verbatimSymlinks: true })
    else symlinkSync(from, join(pkg, 'node_modules', name))
  }
  const host = join(pkg, 'test', 'attacks', 'fixtures', 'bundle-ancestor-bin-host.mjs')
  mkdirSync(join(host, '..'), { recursive: true })
  cpSync(join(import.meta.dirname, 'fixtures', 'bundle-ancestor-bin-host.mjs'), host)
  const marker = join(outside, 'ran-on-the-host')
  const env: NodeJS.ProcessEnv = { ...process.env, VIS_HOME: home }
  // As from a person's shell: `npm test` hands its children npm_config_* (local_prefix among them).
  for (const k of Object.keys(env)) if (/^npm_/i.test(k)) delete env[k]
  const r = spawnSync(process.execPath, [host, R, home, out, marker], {
    cwd: outside,
    env,
    encoding: 'utf8',
    timeout: 240_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const said = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(said, /package: refused/, `the package inside R is read-only in the jail (${said})`)
  assert.match(said, /planted/, said)
  assert.ok(
    !existsSync(marker),
    "vis bundle's npm pack ran the prepack script's `node` from the block's R/node_modules/.bin (an ancestor's " +
      `.bin, which npm puts on the script's PATH) on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} ` +
      `(${said.slice(0, 400)})`,
  )
})
