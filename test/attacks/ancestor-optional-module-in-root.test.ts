// Attack (eighth outsider pass, the general case of pnpm-unresolved-module-in-root): the host imports
// typescript (patch's syntax check) only if it is installed, and Node looks the name up in EVERY
// ancestor's node_modules. Protecting the package's own node_modules directories is not enough: a
// session whose root is the directory ABOVE the application (R, with the package at
// R/app/node_modules/vis-runtime) writes R/node_modules/typescript, an ordinary directory of its root.
// The host must not load a module that resolves inside a session's root (src/util/optional-module.ts):
// patch still applies, its syntax check says why it was skipped, and nothing runs on the host.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

const repo = join(import.meta.dirname, '..', '..')
const host = join(import.meta.dirname, 'fixtures', 'ancestor-optional-module-host.mjs')

test('a module planted in a node_modules of a root above the application is not loaded by the host', async () => {
  const staged = join(repo, 'cpython-dist', '3.11')
  assert.ok(
    existsSync(join(repo, 'dist', 'index.js')) && existsSync(staged),
    'needs dist/ and staged CPython 3.11',
  )
  const R = mkdtempSync(join(tmpdir(), 'vis-attack-ancestor-root-'))
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-ancestor-home-'))
  const outside = mkdtempSync(join(tmpdir(), 'vis-attack-ancestor-outside-'))
  made.push(R, home, outside)
  // npm's flat layout, typescript (a development dependency) not installed.
  const modules = join(R, 'app', 'node_modules')
  const pkg = join(modules, 'vis-runtime')
  mkdirSync(join(pkg, 'cpython-dist'), { recursive: true })
  for (const d of ['bin', 'dist', 'vis-guest', 'web', 'build', 'prebuilds', 'package.json'])
    if (existsSync(join(repo, d)))
      cpSync(join(repo, d), join(pkg, d), { recursive: true, verbatimSymlinks: true })
  cpSync(staged, join(pkg, 'cpython-dist', '3.11'), { recursive: true, verbatimSymlinks: true })
  const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>
    optionalDependencies: Record<string, string>
  }
  for (const name of [...Object.keys(manifest.dependencies), ...Object.keys(manifest.optionalDependencies)]) {
    if (!existsSync(join(repo, 'node_modules', name))) continue
    mkdirSync(join(modules, name, '..'), { recursive: true })
    symlinkSync(join(repo, 'node_modules', name), join(modules, name))
  }
  const marker = join(outside, 'ran-on-the-host')
  const r = spawnSync(process.execPath, [host, pkg, R, home, marker], {
    cwd: outside,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.equal(r.status, 0, r.stderr)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /plant: wrote/, 'the block could write its own root (the allowed direction)')
  assert.ok(
    !existsSync(marker),
    `the host's syntax check imported R/node_modules/typescript, planted by a session on R, and ran it on the host (${out})`,
  )
  assert.match(out, /patch: .*let x = 2/, `patch still applies without the syntax check (${out})`)
  assert.match(out, /inside a session's root/, `the skipped check says why (${out})`)
  assert.equal(readFileSync(join(R, 'a.ts'), 'utf8'), 'let x = 2\n')
})
