// Attack (twelfth outsider pass; SECURITY.md Roots, "The package's hoisted dependencies" and "Modules the
// host imports only when installed"): src/util/dependency-dirs.ts takes every enclosing node_modules of every
// package the dependency graph RESOLVES to, optional peer dependencies (`ai`, `@openai/agents`,
// `@langchain/core`) included, by looking each name up in every ancestor's node_modules, once per process.
// Those directories are then the package's: and optionalModuleRefusal lets the host import a module that
// lies inside one even when it is inside a session's root. A session on R (the directory above the
// application, R/app/node_modules/vis-runtime; the ancestor-optional-module-in-root set-up) plants
// R/node_modules/ai/package.json (a peer nobody installed: any name in the graph does) beside
// R/node_modules/typescript. At the host's next start R/node_modules counts as a dependency directory, and
// the next `patch` of a .ts file imports the planted typescript and runs it, unconfined. (A planted peer
// that is a symlink makes its target, any directory, a dependency directory the same way: bound read-only
// in every jail and refused as a root.)
// Expected: what a sandbox can write never becomes a dependency directory (judge resolved directories
// against the live roots, or take only what the host actually loaded), so the second run still refuses.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { hostFixture, installedPackage, needsBuiltPackage } from './installed-package.js'

const host = hostFixture('peer-dependency-planted-host.mjs')

test('a peer dependency planted in a root does not make that node_modules exempt at the next start', async () => {
  needsBuiltPackage()
  const { root: R, home, pkg, marker, run } = installedPackage('peer-dep', 'npm', 'app')
  const first = run(host, pkg, R, home, marker)
  assert.equal(first.status, 0, first.stderr)
  const out1 = first.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out1, /plant: wrote/, out1)
  assert.match(out1, /inside a session's root/, `the first host refuses the planted typescript (${out1})`)
  assert.ok(!existsSync(marker), `the first host already ran it (${out1})`)
  // The host restarts (vis serve restarted, the next vis run): a new process computes its dependency dirs.
  const second = run(host, pkg, R, home, marker)
  assert.equal(second.status, 0, second.stderr)
  const out2 = second.stdout.trim().replace(/\n/g, ' | ')
  assert.ok(
    !existsSync(marker),
    `after a restart the host took R/node_modules (where the block planted a peer dependency \`ai\`) for a ` +
      `dependency directory and imported the planted R/node_modules/typescript, running it on the host (${out2.slice(0, 500)})`,
  )
})
