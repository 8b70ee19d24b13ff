import { closeSync, constants, openSync, readFileSync, readlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { VisError } from '../../util/errors.js'
import { packageRoot } from '../../util/home.js'
import { importOptional, inAddedModuleDirs, optionalModuleRefusal } from '../../util/optional-module.js'
import { realish } from '../../util/real-path.js'
import type { LanguageSpec } from './languages.js'
import type { TreeParser } from './syntax-node.js'

// web-tree-sitter and the grammars are optional dependencies (several MB each): each is
// loaded the first time a file of its language is indexed, and a missing one is named with
// the package that adds it.
export const RUNTIME_PACKAGE = 'web-tree-sitter'

interface TreeSitterModule {
  Parser: { init(): Promise<void>; new (): TreeParser }
  Language: { load(input: string | Uint8Array): Promise<unknown> }
}

const require = createRequire(import.meta.url)
let runtime: Promise<TreeSitterModule> | undefined
const parsers = new Map<string, Promise<TreeParser>>()

function missing(what: string, pkg: string, op: string, path: string, why?: string): VisError {
  return new VisError(
    'tool.no-grammar',
    `${op}: ${what} is ${why ? `not usable (${why})` : 'not installed'}, so '${path}' cannot be indexed; add it with \`npm install --save-optional ${pkg}\` (the offline kit carries it)`,
    { op, path, package: pkg },
  )
}

function loadRuntime(op: string, path: string): Promise<TreeSitterModule> {
  runtime ??= (async () => {
    // The package is optional: its absence (or a copy the host will not load) is a message.
    const found = await importOptional<TreeSitterModule>(RUNTIME_PACKAGE)
    if (found.absent !== undefined) throw new RuntimeAbsent(found.absent)
    await found.module.Parser.init()
    return found.module
  })()
  return runtime.catch((err) => {
    runtime = undefined
    if (err instanceof RuntimeAbsent || isNotFound(err))
      throw missing(
        `the parser runtime '${RUNTIME_PACKAGE}'`,
        RUNTIME_PACKAGE,
        op,
        path,
        err instanceof RuntimeAbsent ? err.message : undefined,
      )
    throw err
  })
}

class RuntimeAbsent extends Error {}

function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || code === 'ENOENT'
}

// The grammar packages vis-runtime declares (package.json's dependencies and optionalDependencies).
let declared: Set<string> | undefined
function declaredPackages(): Set<string> {
  if (declared) return declared
  try {
    const m = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>
      optionalDependencies?: Record<string, string>
    }
    declared = new Set([...Object.keys(m.dependencies ?? {}), ...Object.keys(m.optionalDependencies ?? {})])
  } catch {
    declared = new Set()
  }
  return declared
}

// The grammar's WASM file, or undefined when its package is not installed or the host will not
// load the copy found. A grammar vis-runtime declares is looked up as Node would from the package
// and refused inside any writable root (optional-module.ts says why). One it does not declare
// (tree-sitter-ruby, which an application adds) counts only from the package's dependency
// directories, where the application installs it and every jail binds read-only: never from
// another ancestor's node_modules, which no install of vis-runtime put there, nor from a vis home.
export function grammarFile(lang: LanguageSpec): string | undefined {
  const specifier = `${lang.package}/${lang.wasm}`
  let file: string
  try {
    file = require.resolve(specifier)
  } catch {
    return undefined
  }
  if (!declaredPackages().has(lang.package)) return inAddedModuleDirs(realish(file)) ? file : undefined
  return optionalModuleRefusal(specifier, file) === undefined ? file : undefined
}

// Where an open descriptor's file lies now (Linux's /proc), or undefined where that is not told.
function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    return undefined
  }
}

// The grammar's bytes, read through one descriptor whose real location is judged after it was
// opened: a path swapped between grammarFile()'s check and this read is caught here, and what the
// runtime compiles is exactly what was judged.
export function grammarBytes(lang: LanguageSpec, file: string): Uint8Array | undefined {
  let fd: number
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch {
    return undefined
  }
  try {
    const at = openedPath(fd) ?? realish(file)
    const ok = declaredPackages().has(lang.package)
      ? optionalModuleRefusal(`${lang.package}/${lang.wasm}`, at) === undefined
      : inAddedModuleDirs(at)
    return ok ? readFileSync(fd) : undefined
  } finally {
    closeSync(fd)
  }
}

// One parser per language for the process: parsing is synchronous, so a parser is never used
// by two calls at once.
export function parserFor(lang: LanguageSpec, op: string, path: string): Promise<TreeParser> {
  const key = `${lang.package}/${lang.wasm}`
  let p = parsers.get(key)
  if (!p) {
    p = (async () => {
      const file = grammarFile(lang)
      if (!file) throw missing(`the ${lang.id} grammar '${lang.package}'`, lang.package, op, path)
      const ts = await loadRuntime(op, path)
      const bytes = grammarBytes(lang, file)
      if (!bytes) throw missing(`the ${lang.id} grammar '${lang.package}'`, lang.package, op, path)
      try {
        const parser = new ts.Parser()
        parser.setLanguage(await ts.Language.load(bytes))
        return parser
      } catch (err) {
        // A grammar built for another ABI than the runtime's (some prebuilt collections).
        throw new VisError(
          'tool.grammar-incompatible',
          `${op}: the ${lang.id} grammar in '${lang.package}' does not load in ${RUNTIME_PACKAGE} (${(err as Error).message}); install the versions package.json pins`,
          { op, path, package: lang.package },
        )
      }
    })()
    parsers.set(key, p)
    // A failure is not cached: the package may be installed while the host runs.
    p.catch(() => parsers.delete(key))
  }
  return p
}
