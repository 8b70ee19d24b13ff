import { createHash } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packageRoot } from './home.js'
import { loadEsbuild } from './optional-module.js'

export type EntryOptions = {
  // The folder under <package>/.cache the bundle goes to: two levels below the package root,
  // like src/<folder>/ and dist/<folder>/, so paths derived from import.meta.url still hold.
  folder: string
  // Leave node_modules packages to be imported at run time; otherwise the bundle is
  // self-contained (for a jail that can read only that file).
  externalPackages?: boolean
  // Remove this entry's other bundles once none was used for this long (a process that still
  // spawns from one marks it used, see entryScript).
  pruneAfterMs?: number
}

const bundles = new Map<string, Promise<string>>()

// The script a process we start runs, from the entry module `name` beside `callerUrl`
// (the caller's import.meta.url). Built, it is the .js beside the caller. Run from the
// TypeScript sources (tests, development), it is bundled with esbuild once per host process
// instead of starting every process under a TypeScript loader.
export function entryScript(
  callerUrl: string,
  name: string,
  options: EntryOptions,
  rewrite = true,
): Promise<string> {
  if (!callerUrl.endsWith('.ts')) return Promise.resolve(fileURLToPath(new URL(`./${name}.js`, callerUrl)))
  const source = fileURLToPath(new URL(`./${name}.ts`, callerUrl))
  const key = `${source}\0${options.folder}\0${options.externalPackages === true}`
  let file = bundles.get(key)
  if (!file) {
    file = bundle(source, name, options)
    bundles.set(key, file)
  }
  return file.then((path) => {
    // Each use marks the bundle used, so another process's prune leaves it; one pruned all the
    // same (unused for pruneAfterMs while this process kept its path) is written again.
    try {
      const now = new Date()
      utimesSync(path, now, now)
      return path
    } catch (err) {
      bundles.delete(key)
      if (!rewrite) throw err
      return entryScript(callerUrl, name, options, false)
    }
  })
}

async function bundle(source: string, name: string, options: EntryOptions): Promise<string> {
  const esbuild = await loadEsbuild()
  const out = await esbuild.build({
    entryPoints: [source],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    ...(options.externalPackages ? { packages: 'external' as const } : {}),
    write: false,
    logLevel: 'silent',
    // The bundle's comments and module keys name paths relative to this: from the process's
    // cwd (the default), two processes in different directories made different bundles of
    // the same sources, and each pruned the other's while its workers were starting.
    absWorkingDir: packageRoot,
  })
  const text = out.outputFiles[0]!.text
  const dir = join(packageRoot, '.cache', options.folder)
  const file = join(dir, `${name}-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.mjs`)
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true })
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, text)
    renameSync(tmp, file)
    if (options.pruneAfterMs !== undefined) prune(dir, name, file, options.pruneAfterMs)
  }
  return file
}

function prune(dir: string, name: string, keep: string, afterMs: number): void {
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry)
    if (p !== keep && entry.startsWith(`${name}-`) && Date.now() - statSync(p).mtimeMs > afterMs) {
      rmSync(p, { force: true })
    }
  }
}
