import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packageRoot } from '../util/home.js'

let bundled: Promise<string> | undefined

// The script a worker process runs. Built, it is dist/worker/child.js. Run from the
// TypeScript sources (tests, development), the child is bundled once per host process
// with esbuild instead of starting every worker under a TypeScript loader, which costs
// ~0.3 s of CPU per worker. The bundle sits two levels below the package root, like
// src/<folder>/ and dist/<folder>/, so paths derived from import.meta.url still hold.
export function childEntry(): Promise<string> {
  const here = import.meta.url
  if (!here.endsWith('.ts')) return Promise.resolve(fileURLToPath(new URL('./child.js', here)))
  bundled ??= bundleChild(fileURLToPath(new URL('./child.ts', here)))
  return bundled
}

async function bundleChild(source: string): Promise<string> {
  const esbuild = await import('esbuild')
  const out = await esbuild.build({
    entryPoints: [source],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  })
  const text = out.outputFiles[0]!.text
  const dir = join(packageRoot, '.cache', 'worker')
  const file = join(dir, `child-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.mjs`)
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true })
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, text)
    renameSync(tmp, file)
    // Older bundles go once no test run that started before an hour ago can still use them.
    for (const name of readdirSync(dir)) {
      const p = join(dir, name)
      if (p !== file && name.startsWith('child-') && Date.now() - statSync(p).mtimeMs > 3_600_000) {
        rmSync(p, { force: true })
      }
    }
  }
  return file
}
