// Attack (eighth outsider pass; SECURITY.md Roots, "The package's hoisted dependencies": the host loads
// its dependencies unconfined, so "the nearest enclosing node_modules of the package and of every
// resolved dependency" is bound read-only and refused by the host tools). That rule protects only
// packages the dependency graph RESOLVES. The host also imports modules that are not dependencies at
// all: `patch` on a .ts/.js file runs `await import('typescript')` (src/tools/fs/syntax.ts; typescript is
// a devDependency, absent from a user's install), and `index()` imports `web-tree-sitter` (optional).
// Node looks such a name up in every ancestor's node_modules, nearest first, and nothing protects the
// places it will look. With pnpm (which README names), the package lies at
// P/node_modules/.pnpm/vis-runtime@V/node_modules/vis-runtime: only each `.pnpm/<pkg>/node_modules` is
// protected, while P/node_modules/.pnpm/node_modules (pnpm's hoisting directory, the next place Node
// looks) and P/node_modules are ordinary writable directories of a root that is the project.
//
// Reproduction: a host process runs from such a pnpm install (the package copied, its dependencies
// linked, typescript not among them) with a session on P. One block writes
// P/node_modules/.pnpm/node_modules/typescript/{package.json,index.js} with plain open() and then calls
// the host's own `patch` on a.ts: the host's syntax check imports the planted module, in the host
// process itself, which writes a marker outside every root. No restart and no person needed: the
// sandbox triggers the load. A fix: never import an unresolved module lazily by bare name (resolve
// typescript/web-tree-sitter once at start, from the package's own dependencies, or bind read-only and
// refuse every directory on the package's lookup path that lies inside a root).
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { hostFixture, installedPackage, needsBuiltPackage } from './installed-package.js'

const host = hostFixture('typescript-planted-host.mjs')
const app = hostFixture('pnpm-entry-link-host.mjs')

test('a block cannot plant a module the host imports lazily on the package lookup path (pnpm layout)', async () => {
  needsBuiltPackage()
  const { root: project, home, pkg, marker, run } = installedPackage('pnpm', 'pnpm')
  const r = run(host, pkg, project, home, marker, 'node_modules/.pnpm/node_modules/typescript')
  assert.equal(r.status, 0, r.stderr)
  assert.ok(
    !existsSync(marker),
    `a block of a session on the project planted node_modules/.pnpm/node_modules/typescript and patched a .ts file ` +
      `(${r.stdout.trim().replace(/\n/g, ' | ')}): the host's syntax check imported it and ran it in the host process, ` +
      'outside every jail (it wrote a file outside every root)',
  )
})

// pnpm links each direct dependency into P/node_modules, and an application in P (or `npx vis`, through
// P/node_modules/.bin) loads vis-runtime through that link. P/node_modules itself is nobody's "nearest
// enclosing node_modules" in this layout (every real path lies in .pnpm/*/node_modules), so it is an
// ordinary writable directory of a root that is the project: a block renames the link aside and puts a
// directory of its own there, and the application's next start imports the sandbox's dist/index.js.
test('a block cannot replace pnpm’s P/node_modules/vis-runtime link the application loads the package through', async () => {
  const { root: project, home, marker, run: runHost } = installedPackage('pnpm', 'pnpm')
  const run = (phase: string) => runHost(app, project, home, phase, marker)
  const planted = run('plant')
  assert.equal(planted.status, 0, planted.stderr)
  assert.ok(!existsSync(marker), 'nothing ran on the host yet')
  run('restart')
  assert.ok(
    !existsSync(marker),
    `a block of a session on the project replaced node_modules/vis-runtime (${planted.stdout.trim().replace(/\n/g, ' | ')}), ` +
      "and the application's next start imported the sandbox's dist/index.js, outside every jail",
  )
})
