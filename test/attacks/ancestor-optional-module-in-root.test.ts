// Attack (eighth outsider pass, the general case of pnpm-unresolved-module-in-root): the host imports
// typescript (patch's syntax check) only if it is installed, and Node looks the name up in EVERY
// ancestor's node_modules. Protecting the package's own node_modules directories is not enough: a
// session whose root is the directory ABOVE the application (R, with the package at
// R/app/node_modules/vis-runtime) writes R/node_modules/typescript, an ordinary directory of its root.
// The host must not load a module that resolves inside a session's root (src/util/optional-module.ts):
// patch still applies, its syntax check says why it was skipped, and nothing runs on the host.
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { hostFixture, installedPackage, needsBuiltPackage } from './installed-package.js'

const host = hostFixture('typescript-planted-host.mjs')

test('a module planted in a node_modules of a root above the application is not loaded by the host', async () => {
  needsBuiltPackage()
  // npm's flat layout in R/app, typescript (a development dependency) not installed.
  const { root: R, home, pkg, marker, run } = installedPackage('ancestor', 'npm', 'app')
  const r = run(host, pkg, R, home, marker, 'node_modules/typescript')
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
