#!/usr/bin/env node
// Produces prebuilds/<platform>-<arch>/ for this machine: builds every addon with
// scripts/build-addon.mjs (same arguments) and copies the .node files there. The
// addons are several named files (a loader plus one per Python minor), which is not
// the one-addon-per-package shape prebuildify/node-gyp-build expect, so they are copied.
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readdirSync, renameSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const build = spawnSync(
  process.execPath,
  [join(root, 'scripts', 'build-addon.mjs'), ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
)
if (build.status !== 0) process.exit(build.status ?? 1)

const from = join(root, 'build', 'Release')
const to = join(root, 'prebuilds', `${process.platform}-${process.arch}`)
mkdirSync(to, { recursive: true })
for (const name of readdirSync(from).filter((n) => n.endsWith('.node'))) {
  // Copy then rename: a process loading the old prebuild never sees a half-written file.
  const tmp = join(to, `.${name}.${process.pid}`)
  copyFileSync(join(from, name), tmp)
  renameSync(tmp, join(to, name))
  console.log(`prebuild: ${join('prebuilds', `${process.platform}-${process.arch}`, name)}`)
}
