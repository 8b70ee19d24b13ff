import { createRequire } from 'node:module'
import { VisError } from '../../util/errors.js'
import { importOptional, optionalModuleRefusal } from '../../util/optional-module.js'
import type { LanguageSpec } from './languages.js'
import type { TreeParser } from './syntax-node.js'

// web-tree-sitter and the grammars are optional dependencies (several MB each): each is
// loaded the first time a file of its language is indexed, and a missing one is named with
// the package that adds it.
export const RUNTIME_PACKAGE = 'web-tree-sitter'

interface TreeSitterModule {
  Parser: { init(): Promise<void>; new (): TreeParser }
  Language: { load(path: string): Promise<unknown> }
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

// The grammar's WASM file, or undefined when its package is not installed.
// A grammar inside a session's root counts as absent (optional-module.ts says why).
export function grammarFile(lang: LanguageSpec): string | undefined {
  const specifier = `${lang.package}/${lang.wasm}`
  try {
    const file = require.resolve(specifier)
    return optionalModuleRefusal(specifier, file) === undefined ? file : undefined
  } catch {
    return undefined
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
      try {
        const parser = new ts.Parser()
        parser.setLanguage(await ts.Language.load(file))
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
