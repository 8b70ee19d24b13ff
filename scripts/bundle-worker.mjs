#!/usr/bin/env node
// Part of `npm run build`: dist/worker/child.js as one CommonJS file, dist/worker/child.cjs,
// which workers start from while it is fresh (src/worker/child-bundle.ts says why). Without
// esbuild (an installed package: it ships the file) there is nothing to do.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const workerDir = fileURLToPath(new URL('../dist/worker/', import.meta.url))
if (!existsSync(`${workerDir}child.js`)) {
  console.error('bundle-worker: dist/worker/child.js is missing; run tsc first')
  process.exit(1)
}
const { bundleChild } = await import(new URL('../dist/worker/child-bundle.js', import.meta.url).href)
try {
  const { bundle, inputs } = await bundleChild(workerDir)
  console.log(`bundle-worker: ${bundle} (${inputs} modules)`)
} catch (err) {
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('esbuild')) {
    console.log('bundle-worker: esbuild is not installed; workers start from dist/worker/child.js')
  } else {
    throw err
  }
}
