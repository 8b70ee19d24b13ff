#!/usr/bin/env node
// `npm run prebuildify`: builds every native part with scripts/build-addon.mjs (same
// arguments; --no-build copies the existing build) and lays them out for shipping in the
// prebuildify layout, one directory per part because node-gyp-build picks ONE .node file
// per directory:
//   prebuilds/vis_loader/prebuilds/linux-x64/node.napi.glibc.node
//   prebuilds/vis_py311/prebuilds/linux-x64/node.napi.glibc.node   (one per Python minor)
//   prebuilds/vis_confine/prebuilds/linux-x64/node.napi.glibc.node
//   prebuilds/vis_seccomp/prebuilds/linux-x64/libvis_seccomp.so
//   prebuilds/vis-launcher/prebuilds/linux-x64/vis-launcher
// and prebuilds/manifest.json naming every file with its size and sha256.
// --platform linux-aarch64-gnu lays out the cross build (build/linux-arm64/Release, made by
// build-addon.mjs with the same flag) under prebuilds/<part>/prebuilds/linux-arm64/ (issue 37).
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
if (!args.includes('--no-build')) {
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-addon.mjs'), ...args], {
    stdio: 'inherit',
  })
  if (build.status !== 0) process.exit(build.status ?? 1)
}

// The tuple and libc tag come from the platform seam (dist/distribution/platform.js).
const at = args.indexOf('--platform')
const seam = await import(pathToFileURL(join(root, 'dist', 'distribution', 'platform.js')).href)
const target = at >= 0 ? seam.targetFor(args[at + 1]) : seam.hostTarget()
const cross = target.tag !== seam.hostTarget().tag
const from = cross ? join(root, 'build', target.nodeTuple, 'Release') : join(root, 'build', 'Release')
const tuple = target.nodeTuple
const libc = target.libc
const addonFile = `node.napi.${libc}.node`
const out = join(root, 'prebuilds')

// part -> [file in build/Release, file name in the prebuild]
const parts = [
  ['vis_loader', 'vis_loader.node', addonFile],
  ['vis_confine', 'vis_confine.node', addonFile],
  ['vis_seccomp', 'libvis_seccomp.so', 'libvis_seccomp.so'],
  ['vis-launcher', 'vis-launcher', 'vis-launcher'],
]
for (const name of readdirSync(from).sort()) {
  const m = /^vis_py3(\d+)\.node$/.exec(name)
  if (m) parts.push([`vis_py3${m[1]}`, name, addonFile])
}

const manifestPath = join(out, 'manifest.json')
const manifest = existsSync(manifestPath)
  ? JSON.parse(readFileSync(manifestPath, 'utf8'))
  : { napi: 8, files: [] }
const fresh = []
for (const [part, built, file] of parts) {
  const src = join(from, built)
  if (!existsSync(src)) {
    console.error(`prebuild: ${src} is missing; run \`npm run build:addon\` first`)
    process.exit(1)
  }
  const dir = join(out, part, 'prebuilds', tuple)
  mkdirSync(dir, { recursive: true })
  // Copy then rename: a process loading the old prebuild never sees a half-written file.
  const dest = join(dir, file)
  const tmp = join(dir, `.${file}.${process.pid}`)
  copyFileSync(src, tmp)
  chmodSync(tmp, 0o755)
  // The build's own time, not the copy's: release-check.mjs refuses a prebuild older than native/.
  const stamp = statSync(src)
  utimesSync(tmp, stamp.atime, stamp.mtime)
  renameSync(tmp, dest)
  const bytes = readFileSync(dest)
  const minor = /^vis_py3(\d+)$/.exec(part)
  // The runtime addon carries the minor it was compiled for; never ship one under another name.
  if (minor && !bytes.includes(`vis-python-minor=3.${minor[1]};`)) {
    console.error(`prebuild: ${src} does not carry the marker for Python 3.${minor[1]}; rebuild it`)
    process.exit(1)
  }
  fresh.push({
    part,
    platform: tuple,
    libc,
    path: relative(out, dest),
    size: statSync(dest).size,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    ...(minor ? { pythonMinor: `3.${minor[1]}` } : {}),
  })
  console.log(`prebuild: ${relative(root, dest)} (${(statSync(dest).size / 1024).toFixed(0)} KiB)`)
}
// Entries for other platforms (made on other machines) are kept.
manifest.files = [...manifest.files.filter((f) => f.platform !== tuple || f.libc !== libc), ...fresh]
writeFileSync(`${manifestPath}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`)
renameSync(`${manifestPath}.tmp`, manifestPath)
console.log(`prebuild: ${relative(root, manifestPath)} lists ${manifest.files.length} files`)
