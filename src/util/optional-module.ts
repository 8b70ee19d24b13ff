import { fileURLToPath, pathToFileURL } from 'node:url'
import { hostDependencyDirs } from './dependency-dirs.js'
import { packageRoot } from './home.js'
import { within } from './path-within.js'
import { realish } from './real-path.js'
import { otherProcessWrites, sandboxWritableHolding } from './writable-roots.js'

// The host imports a few packages only when a call needs them and only if they are installed
// (typescript for patch's syntax check, web-tree-sitter and the grammars for index, esbuild for
// bundles). Node looks a bare name up in EVERY ancestor's node_modules, nearest first, and some of
// those may lie inside a session's root, where a sandbox can write a package of that name: the host
// would run it unconfined. So each such import resolves the name first, refuses a file inside any
// writable root (unless it lies in the package or a dependency directory, which every jail of this
// process binds read-only, and no other vis process's jail writes it) or in any vis home (twelfth
// pass: the outbox a jail writes lies there, outside every root), and then imports that exact
// file, so a package planted nearer after the check is never the one loaded. The writable roots are every live jail's of any vis process of this user
// (read from the registry, so a worker thread sees them as the main thread does: the index parses
// in one) and the roots this process's sessions opened.

export type OptionalModule<T> = { module: T; absent?: undefined } | { module?: undefined; absent: string }

// Why the file at `path` (resolved for `specifier`) must not be loaded, or undefined when it may.
// A vis home is refused whatever else holds the file: no install puts a module there.
export function optionalModuleRefusal(specifier: string, path: string): string | undefined {
  const held = sandboxWritableHolding(path)
  if (held === undefined || (!held.home && readOnlyDependency(path))) return undefined
  const where = held.home
    ? 'inside a vis home (whose outboxes and drafts sandboxes write),'
    : "inside a session's root (of this or another vis process), which a sandbox can write,"
  return (
    `'${specifier}' resolves to a copy ${where} so the host does not load it; install it beside ` +
    'vis-runtime (in its own node_modules) instead'
  )
}

// Whether a module an application added (one vis-runtime does not declare) may be taken from the
// real path `at`: only from the package's dependency directories, and never from a vis home.
export function inAddedModuleDirs(at: string): boolean {
  return sandboxWritableHolding(at)?.home !== true && readOnlyDependency(at)
}

// Whether `path` lies in the package or its dependency directories AND no jail of another vis
// process may write it: this process's jails bind those directories read-only, another install's
// jails (a global `vis serve` beside a project's library install) bind only their own, so a root of
// theirs that holds this install's node_modules is as writable as any other (each jail's entry says
// what it binds read-only: otherProcessWrites).
function readOnlyDependency(path: string): boolean {
  return inDependencyDirs(realish(path)) && !otherProcessWrites(path)
}

// Whether the real path `at` lies in the package or one of its dependency directories: the places
// every jail binds read-only wherever they lie, and where an application installs what it adds.
export function inDependencyDirs(at: string): boolean {
  return [realish(packageRoot), ...hostDependencyDirs()].some((d) => within(at, d))
}

function notFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  return (
    code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || code === 'ERR_PACKAGE_PATH_NOT_EXPORTED'
  )
}

// Resolves and loads `specifier` the way the package's own modules would, or says why not.
export async function importOptional<T>(specifier: string): Promise<OptionalModule<T>> {
  let url: string
  try {
    url = import.meta.resolve(specifier)
  } catch (err) {
    if (notFound(err)) return { absent: `'${specifier}' is not installed` }
    throw err
  }
  if (!url.startsWith('file:')) return { module: (await import(url)) as T }
  const refusal = optionalModuleRefusal(specifier, fileURLToPath(url))
  if (refusal) return { absent: refusal }
  return { module: (await import(pathToFileURL(realish(fileURLToPath(url))).href)) as T }
}

// esbuild (a development dependency) bundles the worker's entry when present; callers fall back to
// the module graph when this throws.
export async function loadEsbuild(): Promise<typeof import('esbuild')> {
  const found = await importOptional<typeof import('esbuild')>('esbuild')
  if (found.absent !== undefined) throw new Error(`cannot bundle: ${found.absent}`)
  return found.module
}
