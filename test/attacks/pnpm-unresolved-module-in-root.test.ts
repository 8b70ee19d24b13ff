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
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

const repo = join(import.meta.dirname, '..', '..')
const host = join(import.meta.dirname, 'fixtures', 'pnpm-unresolved-module-host.mjs')
const app = join(import.meta.dirname, 'fixtures', 'pnpm-entry-link-host.mjs')

test('a block cannot plant a module the host imports lazily on the package lookup path (pnpm layout)', async () => {
  const staged = join(repo, 'cpython-dist', '3.11')
  assert.ok(
    existsSync(join(repo, 'dist', 'index.js')) && existsSync(staged),
    'needs the built dist/ (npm run build) and the staged CPython 3.11 (npm install)',
  )
  const { project, home, outside, pkg } = await pnpmLayout()
  const marker = join(outside, 'ran-on-the-host')
  const r = spawnSync(process.execPath, [host, pkg, project, home, marker], {
    cwd: outside,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.equal(r.status, 0, r.stderr)
  assert.ok(
    !existsSync(marker),
    `a block of a session on the project planted node_modules/.pnpm/node_modules/typescript and patched a .ts file ` +
      `(${r.stdout.trim().replace(/\n/g, ' | ')}): the host's syntax check imported it and ran it in the host process, ` +
      'outside every jail (it wrote a file outside every root)',
  )
})

// pnpm's layout: the package in its own store directory, its dependencies linked beside it.
async function pnpmLayout(): Promise<{ project: string; home: string; outside: string; pkg: string }> {
  const staged = join(repo, 'cpython-dist', '3.11')
  const project = mkdtempSync(join(tmpdir(), 'vis-attack-pnpm-project-'))
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-pnpm-home-'))
  const outside = mkdtempSync(join(tmpdir(), 'vis-attack-pnpm-outside-'))
  made.push(project, home, outside)
  // pnpm's layout: the package in its own store directory, its dependencies linked beside it.
  const store = join(project, 'node_modules', '.pnpm', 'vis-runtime@0.0.0', 'node_modules')
  const pkg = join(store, 'vis-runtime')
  mkdirSync(join(pkg, 'cpython-dist'), { recursive: true })
  for (const d of ['bin', 'dist', 'vis-guest', 'web', 'build', 'prebuilds', 'package.json'])
    if (existsSync(join(repo, d)))
      cpSync(join(repo, d), join(pkg, d), { recursive: true, verbatimSymlinks: true })
  cpSync(staged, join(pkg, 'cpython-dist', '3.11'), { recursive: true, verbatimSymlinks: true })
  const manifest = (await import(join(repo, 'package.json'), { with: { type: 'json' } })).default as {
    dependencies: Record<string, string>
    optionalDependencies: Record<string, string>
  }
  for (const name of [...Object.keys(manifest.dependencies), ...Object.keys(manifest.optionalDependencies)]) {
    if (!existsSync(join(repo, 'node_modules', name))) continue
    mkdirSync(join(store, name, '..'), { recursive: true })
    symlinkSync(join(repo, 'node_modules', name), join(store, name))
  }
  symlinkSync(pkg, join(project, 'node_modules', 'vis-runtime'))
  return { project, home, outside, pkg }
}

// pnpm links each direct dependency into P/node_modules, and an application in P (or `npx vis`, through
// P/node_modules/.bin) loads vis-runtime through that link. P/node_modules itself is nobody's "nearest
// enclosing node_modules" in this layout (every real path lies in .pnpm/*/node_modules), so it is an
// ordinary writable directory of a root that is the project: a block renames the link aside and puts a
// directory of its own there, and the application's next start imports the sandbox's dist/index.js.
test('a block cannot replace pnpm’s P/node_modules/vis-runtime link the application loads the package through', async () => {
  const { project, home, outside } = await pnpmLayout()
  const marker = join(outside, 'ran-on-the-host')
  const run = (phase: string) =>
    spawnSync(process.execPath, [app, project, home, phase, marker], {
      cwd: outside,
      env: { ...process.env, VIS_HOME: home },
      encoding: 'utf8',
      timeout: 120_000,
    })
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
