import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { z } from 'zod'

// The built worker entry as ONE CommonJS file (dist/worker/child.cjs), made by
// `npm run build` beside the tsc output.
//
// A worker is a fresh Node process on the cold path of every session. Started from
// dist/worker/child.js it goes through the ES module loader for ~40 files (resolve, fetch,
// link, each module compiled on its own: V8 runs it --jitless, see CHILD_NODE_FLAGS), which
// cost more than Node's own start-up; one CommonJS file needs none of the ESM loader's
// machinery. Same run, 12 starts each, as far as the line that loads Python: child.js
// 192 ms, child.cjs 147 ms, an empty script 113 ms (load average ~4). Packages (zod, the
// addon loader) stay require()d from node_modules.
//
// The file lists the modules it was built from (child.cjs.json): a worker starts from it only
// while none of them is newer, so a later `tsc` alone never leaves a worker running old code.

export const BUNDLE = 'child.cjs'
const MANIFEST = `${BUNDLE}.json`

const Manifest = z.object({ inputs: z.array(z.string()).min(1) })

// dist/worker/child.cjs when it was built from the modules as they are now, else undefined.
export function freshBundle(workerDir: string): string | undefined {
  const bundle = join(workerDir, BUNDLE)
  try {
    const built = statSync(bundle).mtimeMs
    const manifest = Manifest.parse(JSON.parse(readFileSync(join(workerDir, MANIFEST), 'utf8')))
    for (const input of manifest.inputs) {
      if (statSync(resolve(workerDir, input)).mtimeMs > built) return undefined
    }
    return bundle
  } catch {
    // No bundle, no manifest, or an input gone: the module graph is the entry.
    return undefined
  }
}

// Bundles workerDir/child.js (a tsc output) into workerDir/child.cjs and its manifest.
export async function bundleChild(workerDir: string): Promise<{ bundle: string; inputs: number }> {
  const esbuild = await import('esbuild')
  const entry = join(workerDir, 'child.js')
  const out = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    // The modules derive paths from import.meta.url (the package root two levels up, the
    // addon's require): the bundle sits where child.js does, so its own URL serves them all.
    banner: { js: "const __visModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
    define: { 'import.meta.url': '__visModuleUrl' },
    metafile: true,
    // The manifest's paths are relative to the bundle's folder.
    absWorkingDir: workerDir,
    write: false,
    logLevel: 'silent',
  })
  const text = out.outputFiles[0]!.text
  const inputs = Object.keys(out.metafile.inputs)
  const bundle = join(workerDir, BUNDLE)
  // The manifest first, the bundle last and renamed in: a worker starting meanwhile sees the
  // old bundle with the new list (stale by mtime, so child.js) or the whole new pair.
  writeFileSync(join(workerDir, MANIFEST), `${JSON.stringify({ inputs }, null, 1)}\n`)
  const tmp = `${bundle}.${process.pid}.tmp`
  writeFileSync(tmp, text)
  renameSync(tmp, bundle)
  return { bundle, inputs: inputs.length }
}
