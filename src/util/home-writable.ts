import { accessSync, constants, statSync } from 'node:fs'
import { dirname, sep } from 'node:path'
import { VisError } from './errors.js'
import { visHome } from './home.js'

export type HomeProblem = {
  home: string
  // The directory that refused: the home itself or its deepest existing ancestor.
  path: string
  errno: string
  reason: string
}

function describe(err: unknown): { errno: string; reason: string } {
  const e = err as NodeJS.ErrnoException
  const errno = e.code ?? 'EIO'
  // "EROFS: read-only file system, access '/x'" -> "read-only file system"
  const reason = /^[A-Z]+: ([^,]+)/.exec(e.message)?.[1] ?? e.message
  return { errno, reason }
}

// Why the vis home cannot be written, or undefined when it can. Nothing is created: the home,
// or the deepest directory on its way that exists, is asked with access(W_OK), which says EROFS
// for a read-only mount and EACCES for permission bits where a recursive mkdir says only ENOENT.
export function homeProblem(home = visHome()): HomeProblem | undefined {
  let dir = home
  for (;;) {
    let isDir: boolean | undefined
    try {
      isDir = statSync(dir, { throwIfNoEntry: false })?.isDirectory()
    } catch (err) {
      return { home, path: dir, ...describe(err) }
    }
    if (isDir === false) return { home, path: dir, errno: 'ENOTDIR', reason: 'not a directory' }
    if (isDir) {
      try {
        accessSync(dir, constants.W_OK | constants.X_OK)
        return undefined
      } catch (err) {
        return { home, path: dir, ...describe(err) }
      }
    }
    const up = dirname(dir)
    if (up === dir) return { home, path: dir, errno: 'ENOENT', reason: 'no such file or directory' }
    dir = up
  }
}

export function homeProblemMessage(p: HomeProblem): string {
  const where = p.path === p.home ? p.home : `${p.home} (at ${p.path})`
  return `the vis home ${where} is not writable: ${p.errno} (${p.reason}); set VIS_HOME to a writable directory`
}

export function homeUnwritable(p: HomeProblem): VisError {
  return new VisError('home.unwritable', homeProblemMessage(p), { path: p.home, errno: p.errno })
}

function within(path: string, home: string): boolean {
  return path === home || path.startsWith(home + sep) || home.startsWith(path + sep)
}

// The paths an error (or what it wraps) names: Node's fs errors carry `path`, VisErrors
// carry context.path.
function pathsOf(err: unknown, depth = 0): string[] {
  if (!err || typeof err !== 'object' || depth > 3) return []
  const e = err as { path?: unknown; context?: { path?: unknown }; cause?: unknown }
  const own = [e.path, e.context?.path].filter((p): p is string => typeof p === 'string')
  return [...own, ...pathsOf(e.cause, depth + 1)]
}

// A command's failure that touched the vis home while the home cannot be written is reported
// as that, whatever errno the failing call happened to see (a recursive mkdir on a read-only
// mount says ENOENT).
export function homeFailure(err: unknown, home = visHome()): VisError | undefined {
  if (!pathsOf(err).some((p) => within(p, home))) return undefined
  const problem = homeProblem(home)
  return problem ? homeUnwritable(problem) : undefined
}
