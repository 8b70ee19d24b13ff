// Attack (twelfth outsider pass): the host's optional imports (typescript for patch's syntax check) refuse
// a module that resolves INSIDE a session's root (src/util/optional-module.ts), judged on the resolved
// file's real path. But a root is not the only host place a sandbox writes: its worker's outbox
// (<vis home>/outbox/worker-*, VIS_OUTBOX in the block, bound read-write into the jail at the same path)
// is one too, outside every root. A session on R (the directory above the application, as in
// ancestor-optional-module-in-root) writes its code into the outbox and plants
// R/node_modules/typescript/index.js as a symlink to it: the entry resolves, real path in the outbox, not
// in a root, and the host imports and runs it unconfined when patch checks a .ts file.
// Expected: a module whose real path lies in any place a sandbox can write (roots, outboxes, draft upper
// directories) is not loaded, or the resolved path's own components are judged (the package directory is
// in a root).
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { hostFixture, installedPackage, needsBuiltPackage } from './installed-package.js'

const host = hostFixture('typescript-outbox-link-host.mjs')

test("a typescript planted in a root as a link into the worker's outbox is not loaded by the host", async () => {
  needsBuiltPackage()
  const { root: R, home, pkg, marker, run } = installedPackage('outbox-link', 'npm', 'app')
  const r = run(host, pkg, R, home, marker, 'node_modules/typescript')
  assert.equal(r.status, 0, r.stderr)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /plant: wrote/, `the block could write its own root and outbox (${out})`)
  assert.ok(
    !existsSync(marker),
    `the host's syntax check imported R/node_modules/typescript, whose entry links into the worker's outbox, and ran it on the host (${out})`,
  )
})
