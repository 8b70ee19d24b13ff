import { createHash } from 'node:crypto'
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { z } from 'zod'
import { loadEsbuild } from '../util/optional-module.js'

// The built worker entry as ONE CommonJS file (dist/worker/child.cjs), made by
// `npm run build` beside the tsc output.
//
// A worker is a fresh Node process on the cold path of every session. Started from
// dist/worker/child.js it goes through the ES module loader for ~40 files (resolve, fetch,
// link, each module compiled on its own: V8 runs it --jitless, see CHILD_NODE_FLAGS), which
// cost more than Node's own start-up; one CommonJS file needs none of the ESM loader's
// machinery. Same run, 20 starts each in a worker's environment, as far as the line that
// loads Python: child.js 111 ms, child.cjs 80 ms, an empty script 39 ms. Packages (zod, the
// addon loader) stay require()d from node_modules.
//
// The file lists the modules it was built from with a digest of each (child.cjs.json): a worker
// starts from it only while every one of them is as it was, so a later `tsc` alone never leaves
// a worker running old code. Contents, not mtimes: npm writes an installed package's files
// with the time of extraction, in archive order, which says nothing about which came first.

export const BUNDLE = 'child.cjs'
const MANIFEST = `${BUNDLE}.json`

const Manifest = z.object({
  bundle: z.string().length(64),
  inputs: z.array(z.object({ path: z.string().min(1), sha256: z.string().length(64) })).min(1),
})

const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex')

// dist/worker/child.cjs when it was built from the modules as they are now, else undefined.
// Reads ~0.4 MB once per host process (childEntry keeps the answer).
export function freshBundle(workerDir: string): string | undefined {
  const bundle = join(workerDir, BUNDLE)
  try {
    const manifest = Manifest.parse(JSON.parse(readFileSync(join(workerDir, MANIFEST), 'utf8')))
    if (digest(bundle) !== manifest.bundle) return undefined
    for (const input of manifest.inputs) {
      if (digest(resolve(workerDir, input.path)) !== input.sha256) return undefined
    }
    return bundle
  } catch {
    // No bundle, no manifest, or an input gone: the module graph is the entry.
    return undefined
  }
}

// Bundles workerDir/child.js (a tsc output) into workerDir/child.cjs and its manifest.
export async function bundleChild(workerDir: string): Promise<{ bundle: string; inputs: number }> {
  const esbuild = await loadEsbuild()
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
  const inputs = Object.keys(out.metafile.inputs).map((path) => ({
    path,
    sha256: digest(resolve(workerDir, path)),
  }))
  const bundle = join(workerDir, BUNDLE)
  const manifest = { bundle: createHash('sha256').update(text).digest('hex'), inputs }
  // Each file renamed in whole; a worker starting between the two renames sees a bundle that
  // does not match its manifest, and starts from child.js.
  for (const [file, content] of [
    [bundle, text],
    [join(workerDir, MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`],
  ] as const) {
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, content)
    renameSync(tmp, file)
  }
  return { bundle, inputs: inputs.length }
}
