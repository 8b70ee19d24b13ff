// The host's optional imports (src/util/optional-module.ts): an installed module loads, a missing one
// is absent with a reason, and one that resolves inside a session's root is refused, unless it lies
// in the package itself, which every jail binds read-only. Real files and the real typescript package.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { packageRoot } from '../../src/util/home.js'
import { registerHome } from '../../src/util/home-registry.js'
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

// Twelfth outsider pass: a jail writes its worker's outbox (<home>/outbox/worker-*) and a draft's
// upper folder, inside the vis home and outside every root; a module reached through a link into
// one (R/node_modules/typescript/index.js -> the outbox) is judged by its real path there.
test("a module whose real path lies in a vis home is refused, this process's or a registered one", () => {
  const place = (tag: string) => {
    const d = realpathSync(mkdtempSync(join(tmpdir(), `vis-optional-module-${tag}-`)))
    made.push(d)
    return d
  }
  const outside = place('elsewhere')
  writeFileSync(join(outside, 'ts.js'), 'module.exports = {}\n')
  assert.equal(optionalModuleRefusal('typescript', join(outside, 'ts.js')), undefined, 'no root, no home')
  const own = place('own-home')
  const outbox = join(own, 'outbox', 'worker-1', '.keep')
  mkdirSync(outbox, { recursive: true })
  writeFileSync(join(outbox, 'ts.js'), 'module.exports = {}\n')
  const linked = join(outside, 'node_modules', 'typescript')
  mkdirSync(linked, { recursive: true })
  symlinkSync(join(outbox, 'ts.js'), join(linked, 'index.js'))
  assert.equal(optionalModuleRefusal('typescript', join(linked, 'index.js')), undefined, 'not a home yet')
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = own
  try {
    assert.match(
      optionalModuleRefusal('typescript', join(linked, 'index.js')) ?? '',
      /'typescript' resolves to a copy inside a vis home .*install it beside vis-runtime/,
    )
  } finally {
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
  }
  // Another vis process's home, known from the registry.
  const other = place('other-home')
  const drafted = join(other, 'drafts', 'd1', 'upper')
  mkdirSync(drafted, { recursive: true })
  writeFileSync(join(drafted, 'ts.js'), 'module.exports = {}\n')
  assert.equal(optionalModuleRefusal('typescript', join(drafted, 'ts.js')), undefined, 'not registered yet')
  registerHome(other)
  assert.match(optionalModuleRefusal('typescript', join(drafted, 'ts.js')) ?? '', /inside a vis home/)
  assert.equal(optionalModuleRefusal('typescript', join(outside, 'ts.js')), undefined, 'still none elsewhere')
})
