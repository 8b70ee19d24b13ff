// The host's optional imports (src/util/optional-module.ts): an installed module loads, a missing one
// is absent with a reason, and one that resolves inside a session's root is refused, unless it lies
// in the package itself, which every jail binds read-only. Real files and the real typescript package.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { packageRoot } from '../../src/util/home.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { importOptional, optionalModuleRefusal } from '../../src/util/optional-module.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test('an installed optional module loads; a missing one is absent and says so', async () => {
  const ts = await importOptional<{ default: typeof import('typescript') }>('typescript')
  assert.equal(ts.absent, undefined)
  assert.equal(typeof ts.module?.default.transpileModule, 'function')
  const none = await importOptional('vis-no-such-package-at-all')
  assert.equal(none.module, undefined)
  assert.match(none.absent ?? '', /'vis-no-such-package-at-all' is not installed/)
})

test("a copy inside a session's root is refused; the package's own node_modules is not", async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'vis-optional-module-')))
  made.push(root)
  const planted = join(root, 'node_modules', 'typescript')
  mkdirSync(planted, { recursive: true })
  writeFileSync(join(planted, 'index.js'), 'module.exports = {}\n')
  assert.equal(optionalModuleRefusal('typescript', join(planted, 'index.js')), undefined, 'no session yet')
  noteSessionRoot(root)
  assert.match(
    optionalModuleRefusal('typescript', join(planted, 'index.js')) ?? '',
    /'typescript' resolves to a copy inside a session's root/,
  )
  // A session on the checkout itself: its node_modules is bound read-only, so typescript still loads.
  noteSessionRoot(realpathSync(packageRoot))
  const ts = await importOptional<{ default: typeof import('typescript') }>('typescript')
  assert.equal(ts.absent, undefined)
  assert.equal(typeof ts.module?.default.transpileModule, 'function')
})
