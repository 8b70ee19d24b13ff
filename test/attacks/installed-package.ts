// The set-up the attacks on an installed vis-runtime share: this checkout's built package installed
// inside a directory a session's root contains, laid out as npm or pnpm lay it out, and host
// processes (test/attacks/fixtures/*-host.mjs) run from that install with their own vis home and
// their working directory outside every root, where the marker a planted module writes goes.
import assert from 'node:assert/strict'
import { type SpawnSyncReturns, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import manifest from '../../package.json' with { type: 'json' }

const repo = join(import.meta.dirname, '..', '..')
const staged = join(repo, 'cpython-dist', '3.11')

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

export type Layout =
  // npm: <dir>/node_modules/vis-runtime with every module of this checkout hoisted beside it (better-sqlite3,
  // the one attacked, a real copy; the rest linked).
  | 'npm-hoisted'
  // npm: <dir>/node_modules/vis-runtime with the package's declared dependencies linked beside it.
  | 'npm'
  // pnpm: the package in its store directory <dir>/node_modules/.pnpm/vis-runtime@0.0.0/node_modules, its
  // declared dependencies linked beside it, and <dir>/node_modules/vis-runtime a link to it.
  | 'pnpm'

export type Install = {
  // The session's root; the package is installed in it (or `under` it).
  root: string
  // The package directory (the real one, not pnpm's link to it).
  pkg: string
  home: string
  // Outside every root: a planted module that ran on the host wrote it.
  marker: string
  // Runs a host fixture from the install, with this home, in `outside`.
  run: (fixture: string, ...args: string[]) => SpawnSyncReturns<string>
}

export const hostFixture = (name: string) => join(import.meta.dirname, 'fixtures', name)

export function needsBuiltPackage(): void {
  assert.ok(
    existsSync(join(repo, 'dist', 'index.js')) && existsSync(staged),
    'needs the built dist/ (npm run build) and the staged CPython 3.11 (npm install)',
  )
}

// `under`: where below the root the package is installed ('' for the root itself).
export function installedPackage(tag: string, layout: Layout, under = ''): Install {
  const root = mkdtempSync(join(tmpdir(), `vis-attack-${tag}-root-`))
  const home = mkdtempSync(join(tmpdir(), `vis-attack-${tag}-home-`))
  const outside = mkdtempSync(join(tmpdir(), `vis-attack-${tag}-outside-`))
  made.push(root, home, outside)
  const modules = join(root, under, 'node_modules')
  const beside = layout === 'pnpm' ? join(modules, '.pnpm', 'vis-runtime@0.0.0', 'node_modules') : modules
  const pkg = join(beside, 'vis-runtime')
  copyPackage(pkg)
  if (layout === 'npm-hoisted') {
    for (const name of readdirSync(join(repo, 'node_modules'))) {
      if (name === 'better-sqlite3') continue
      symlinkSync(join(repo, 'node_modules', name), join(modules, name))
    }
    cpSync(join(repo, 'node_modules', 'better-sqlite3'), join(modules, 'better-sqlite3'), {
      recursive: true,
      verbatimSymlinks: true,
    })
  } else {
    linkDeclaredDependencies(beside)
  }
  if (layout === 'pnpm') symlinkSync(pkg, join(modules, 'vis-runtime'))
  const run = (fixture: string, ...args: string[]) =>
    spawnSync(process.execPath, [fixture, ...args], {
      cwd: outside,
      env: { ...process.env, VIS_HOME: home },
      encoding: 'utf8',
      timeout: 120_000,
    })
  return { root, pkg, home, marker: join(outside, 'ran-on-the-host'), run }
}

// The files a published package holds, from this checkout's build, and the staged CPython.
function copyPackage(pkg: string): void {
  mkdirSync(join(pkg, 'cpython-dist'), { recursive: true })
  for (const d of ['bin', 'dist', 'vis-guest', 'web', 'build', 'prebuilds', 'package.json'])
    if (existsSync(join(repo, d)))
      cpSync(join(repo, d), join(pkg, d), { recursive: true, verbatimSymlinks: true })
  cpSync(staged, join(pkg, 'cpython-dist', '3.11'), { recursive: true, verbatimSymlinks: true })
}

// Only what package.json names (typescript, a development dependency, is not among them).
function linkDeclaredDependencies(beside: string): void {
  for (const name of [...Object.keys(manifest.dependencies), ...Object.keys(manifest.optionalDependencies)]) {
    if (!existsSync(join(repo, 'node_modules', name))) continue
    mkdirSync(join(beside, name, '..'), { recursive: true })
    symlinkSync(join(repo, 'node_modules', name), join(beside, name))
  }
}
