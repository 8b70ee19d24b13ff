// Attack (fourteenth outsider pass; surface 3: `vis bundle`'s npm, src/bundle/npm.ts and
// src/util/tool-home.ts npmConfigEnv). The thirteenth pass gave the bundle's npm a private HOME and empty
// user/global configs when HOME or npm's global config lies in a root. But npm reads a third file: the
// PROJECT config, `<localPrefix>/.npmrc`, and its local prefix is not only the folder `npm pack` runs in:
// npm walks up from it and takes a parent whose package.json lists that folder in `workspaces` as the
// project. A vis-runtime checkout in a folder a session roots (a developer's ~/projects/tools/vis-runtime,
// the package bound read-only in the jail) has its parents written by the block: R/package.json
// (`"workspaces": ["tools/vis-runtime"]`) and R/.npmrc (`script-shell=R/sh.sh`). `vis bundle` then runs
// the package's prepack script through the block's shell, on the host, unconfined. HOME and its configs
// are untouched, so npmConfigEnv changes nothing.
//
// Reproduction: this checkout's built package copied to R/tools/vis-runtime (its dependencies linked) and a
// host run from there, with no npm_config_* of its own (as from a person's shell): a session on R, whose
// block finds the package itself read-only (the control) and writes R/package.json, R/.npmrc and R/sh.sh
// (appending to a marker outside R); then packPackage(packageRoot, out), as `vis bundle` does. Expected:
// the block's shell never runs (npm reads no project config from a root, or the bundle is refused); the
// marker is never written.
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

const base = mkdtempSync(join(tmpdir(), 'vis-attack-bundle-workspace-'))
after(() => rmSync(base, { recursive: true, force: true }))
const repo = join(import.meta.dirname, '..', '..')

test("vis bundle's npm does not read a project .npmrc a block wrote in a workspace root above the package", () => {
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
  const host = join(pkg, 'test', 'attacks', 'fixtures', 'bundle-workspace-root-host.mjs')
  mkdirSync(join(host, '..'), { recursive: true })
  cpSync(join(import.meta.dirname, 'fixtures', 'bundle-workspace-root-host.mjs'), host)
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
    `vis bundle's npm pack took the block's R/package.json as a workspace root, read its R/.npmrc and ran ` +
      `its script-shell on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} ` +
      `(${said.slice(0, 400)})`,
  )
})
