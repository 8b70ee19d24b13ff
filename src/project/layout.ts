import { realpathSync, statSync } from 'node:fs'
import { dirname, isAbsolute, resolve, sep } from 'node:path'
import { errorMessage } from '../util/errors.js'
import { within } from '../util/path-within.js'
import { type DeclaredEntry, type LayoutWarning, readDeclaredLayout } from './declared.js'

export type ProjectLayoutOptions = {
  // The configured `python.source_paths`: always first, in this order, when they exist.
  sourcePaths?: string[]
  // Python minor whose interpreter parses the files.
  python?: string
}

export type ProjectLayout = {
  // Absolute import roots for the sandbox's sys.path, configured ones first.
  importRoots: string[]
  // Absolute test directories pytest would collect from.
  testPaths: string[]
  warnings: LayoutWarning[]
}

// A directory that really lies inside `root`: its real path (every link on the way resolved)
// is the root's or below it. The project is a directory the sandbox writes, so a declared
// `src` may be a link out of it; such an entry never reaches sys.path.
export function isDirWithin(path: string, root: string): boolean {
  try {
    return statSync(path).isDirectory() && within(realpathSync(path), realpathSync(root))
  } catch {
    return false
  }
}

// The sys.path entry a declared string stands for: the directory itself for a root; for a
// package's directory, the directory above its dotted name (lib/a/b for package a.b → lib).
// A package whose directory does not end in its own name cannot be imported from any root.
function importRootOf(projectDir: string, e: DeclaredEntry): string | undefined {
  const path = resolve(projectDir, e.value)
  if (e.kind !== 'package') return path
  const parts = (e.package ?? '').split('.').filter(Boolean)
  let dir = path
  for (const part of parts.reverse()) {
    if (dir.split(sep).pop() !== part) return undefined
    dir = dirname(dir)
  }
  return dir
}

// What the project's metadata declares, resolved: relative to the project, existing
// directories that really lie inside it only, each once, configured source paths first. No
// metadata, nothing inferred.
export async function discoverProjectLayout(
  projectDir: string,
  opts: ProjectLayoutOptions = {},
): Promise<ProjectLayout> {
  const root = resolve(projectDir)
  const warnings: LayoutWarning[] = []
  let entries: DeclaredEntry[] = []
  try {
    const declared = await readDeclaredLayout(root, { python: opts.python })
    entries = declared.entries
    warnings.push(...declared.warnings)
  } catch (err) {
    // The layout only seeds sys.path; a project we cannot read still gets a session.
    warnings.push({ file: '', message: errorMessage(err) })
  }
  const importRoots: string[] = []
  const testPaths: string[] = []
  const add = (list: string[], path: string | undefined, inside: string) => {
    if (path !== undefined && isDirWithin(path, inside) && !list.includes(path)) list.push(path)
  }
  // Configured source paths are the operator's, and may lie anywhere (the caller keeps those
  // inside the session's roots); declared ones are the project's, and stay inside it.
  for (const p of opts.sourcePaths ?? []) {
    const abs = isAbsolute(p) ? resolve(p) : resolve(root, p)
    add(importRoots, abs, abs)
  }
  for (const e of entries) {
    if (e.kind === 'tests') add(testPaths, resolve(root, e.value), root)
    else add(importRoots, importRootOf(root, e), root)
  }
  return { importRoots, testPaths, warnings }
}
