import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packageRoot } from './home.js'

export type EntryOptions = {
  // The folder under <package>/.cache the bundle goes to: two levels below the package root,
  // like src/<folder>/ and dist/<folder>/, so paths derived from import.meta.url still hold.
  folder: string
  // Leave node_modules packages to be imported at run time; otherwise the bundle is
  // self-contained (for a jail that can read only that file).
  externalPackages?: boolean
  // Remove this entry's older bundles once they are this old (no run that could still use
  // them is left).
  pruneAfterMs?: number
}

const bundles = new Map<string, Promise<string>>()

// The script a process we start runs, from the entry module `name` beside `callerUrl`
// (the caller's import.meta.url). Built, it is the .js beside the caller. Run from the
// TypeScript sources (tests, development), it is bundled with esbuild once per host process
// instead of starting every process under a TypeScript loader.
export function entryScript(callerUrl: string, name: string, options: EntryOptions): Promise<string> {
  if (!callerUrl.endsWith('.ts')) return Promise.resolve(fileURLToPath(new URL(`./${name}.js`, callerUrl)))
  const source = fileURLToPath(new URL(`./${name}.ts`, callerUrl))
  let file = bundles.get(source)
  if (!file) {
    file = bundle(source, name, options)
    bundles.set(source, file)
  }
  return file
}

async function bundle(source: string, name: string, options: EntryOptions): Promise<string> {
  const esbuild = await import('esbuild')
  const out = await esbuild.build({
    entryPoints: [source],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    ...(options.externalPackages ? { packages: 'external' as const } : {}),
    write: false,
    logLevel: 'silent',
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
