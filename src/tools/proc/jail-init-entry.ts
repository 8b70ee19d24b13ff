import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packageRoot } from '../../util/home.js'

let entry: Promise<string> | undefined

// The script a tool jail runs first (jail-init). Built, it is dist/tools/proc/jail-init.js.
// From the TypeScript sources it is bundled once per host process into one
// self-contained file two levels below the package root (like src/<folder>/), so paths
// derived from import.meta.url still hold and the jail needs to read only that file,
// node and vis_confine.node, never a TypeScript loader or node_modules.
export function jailInitEntry(): Promise<string> {
  const here = import.meta.url
  entry ??= here.endsWith('.ts')
    ? bundle(fileURLToPath(new URL('./jail-init.ts', here)))
    : Promise.resolve(fileURLToPath(new URL('./jail-init.js', here)))
  return entry
}

async function bundle(source: string): Promise<string> {
  const esbuild = await import('esbuild')
  const out = await esbuild.build({
    entryPoints: [source],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'silent',
  })
  const text = out.outputFiles[0]!.text
  const dir = join(packageRoot, '.cache', 'tools')
  const file = join(dir, `jail-init-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.mjs`)
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true })
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, text)
    renameSync(tmp, file)
  }
  return file
}
