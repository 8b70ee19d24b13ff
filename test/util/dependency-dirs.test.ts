// Where the host loads vis-runtime's dependencies from (src/util/dependency-dirs.ts), for
// the layouts npm, workspaces, pnpm and `npm link` make: those directories are what the jail binds
// read-only and the host file tools refuse. Real directory trees on disk.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { packageMounts } from '../../src/confinement/mount-sources.js'
import { dependencyDirs } from '../../src/util/dependency-dirs.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

function temp(): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'vis-dependency-dirs-')))
  made.push(d)
  return d
}

function pkg(dir: string, name: string, dependencies: Record<string, string> = {}): string {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, dependencies }))
  return dir
}

test('npm hoisting: the project node_modules the package and its dependencies sit in', () => {
  const p = temp()
  const vis = pkg(join(p, 'node_modules', 'vis-runtime'), 'vis-runtime', { zod: '1', '@scope/a': '1' })
  pkg(join(p, 'node_modules', 'zod'), 'zod')
  pkg(join(p, 'node_modules', '@scope', 'a'), '@scope/a', { b: '1' })
  pkg(join(p, 'node_modules', '@scope', 'a', 'node_modules', 'b'), 'b')
  pkg(join(p, 'src'), 'not-a-dependency')
  assert.deepEqual(dependencyDirs(vis), [join(p, 'node_modules')])
  // In a session rooted at the project: bound read-only over the root, the project's own files not.
  assert.deepEqual(packageMounts([{ path: p, real: p }], vis, dependencyDirs(vis)).sort(), [
    join(p, 'node_modules'),
    vis,
  ])
})

test('a workspace hoists further up; a checkout with its own node_modules adds nothing', () => {
  const w = temp()
  const vis = pkg(join(w, 'packages', 'app', 'node_modules', 'vis-runtime'), 'vis-runtime', { zod: '1' })
  pkg(join(w, 'node_modules', 'zod'), 'zod')
  assert.deepEqual(dependencyDirs(vis), [join(w, 'node_modules'), join(w, 'packages', 'app', 'node_modules')])
  const checkout = pkg(join(temp(), 'vis-runtime'), 'vis-runtime', { zod: '1' })
  pkg(join(checkout, 'node_modules', 'zod'), 'zod')
  assert.deepEqual(dependencyDirs(checkout), [])
})

// Every enclosing node_modules counts, not the nearest: P/node_modules holds pnpm's link to the
// package and .pnpm/node_modules is where Node looks next, so the outermost one covers the store.
test('pnpm and npm link: the whole P/node_modules around the store, and a linked dependency by its real place', () => {
  const p = temp()
  const store = join(p, 'node_modules', '.pnpm')
  const vis = pkg(join(store, 'vis-runtime@1', 'node_modules', 'vis-runtime'), 'vis-runtime', {
    zod: '1',
    linked: '1',
  })
  pkg(join(store, 'zod@1', 'node_modules', 'zod'), 'zod')
  symlinkSync(
    join(store, 'zod@1', 'node_modules', 'zod'),
    join(store, 'vis-runtime@1', 'node_modules', 'zod'),
  )
  const elsewhere = pkg(join(temp(), 'linked-src'), 'linked')
  symlinkSync(elsewhere, join(store, 'vis-runtime@1', 'node_modules', 'linked'))
  assert.deepEqual(dependencyDirs(vis), [elsewhere, join(p, 'node_modules')].sort())
})

// Twelfth outsider pass: an optional peer nobody installed is looked up in every ancestor's
// node_modules, where a session's root may hold a package a sandbox planted under its name.
test('a planted optional or peer dependency adds no directory; an installed one lies in what the required ones give', () => {
  const r = temp()
  const app = join(r, 'app')
  const vis = join(app, 'node_modules', 'vis-runtime')
  mkdirSync(vis, { recursive: true })
  writeFileSync(
    join(vis, 'package.json'),
    JSON.stringify({
      name: 'vis-runtime',
      dependencies: { zod: '1' },
      optionalDependencies: { 'web-tree-sitter': '1' },
      peerDependencies: { ai: '6', '@openai/agents': '1' },
    }),
  )
  pkg(join(app, 'node_modules', 'zod'), 'zod')
  pkg(join(app, 'node_modules', 'web-tree-sitter'), 'web-tree-sitter')
  const before = dependencyDirs(vis)
  assert.deepEqual(before, [join(app, 'node_modules')])
  // Planted in R/node_modules (on the lookup path from the package): a bare peer, and a peer linked
  // to an arbitrary folder.
  pkg(join(r, 'node_modules', 'ai'), 'ai', { zod: '1' })
  const elsewhere = pkg(join(temp(), 'anything'), '@openai/agents')
  mkdirSync(join(r, 'node_modules', '@openai'), { recursive: true })
  symlinkSync(elsewhere, join(r, 'node_modules', '@openai', 'agents'))
  pkg(join(r, 'node_modules', 'typescript'), 'typescript')
  assert.deepEqual(dependencyDirs(vis), before)
  // The same peer installed beside the package (where npm puts it) is inside the directory found.
  pkg(join(app, 'node_modules', 'ai'), 'ai')
  assert.deepEqual(dependencyDirs(vis), before)
})

test('required dependencies count at every level, also where a nested one is hoisted further up', () => {
  const w = temp()
  const vis = pkg(join(w, 'packages', 'app', 'node_modules', 'vis-runtime'), 'vis-runtime', { a: '1' })
  pkg(join(w, 'packages', 'app', 'node_modules', 'a'), 'a', { b: '1' })
  pkg(join(w, 'node_modules', 'b'), 'b')
  assert.deepEqual(dependencyDirs(vis), [join(w, 'node_modules'), join(w, 'packages', 'app', 'node_modules')])
})
