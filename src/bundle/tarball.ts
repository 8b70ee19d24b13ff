// Checks a packed vis-runtime tarball before it goes into a bundle: it must carry the
// prebuilt native parts for this platform and a runtime addon per requested Python minor,
// or the offline machine would need a compiler after all.

import type { Target } from '../distribution/platform.js'
import { PREBUILT_ADDON_FILE, prebuildPath } from '../native/locate.js'
import { VisError } from '../util/errors.js'

export type PackedPackage = { name: string; version: string; entries: string[] }

export async function readTarball(file: string): Promise<PackedPackage> {
  const { list } = await import('tar')
  const entries: string[] = []
  let pkgJson = ''
  await list({
    file,
    strict: true,
    onReadEntry(entry) {
      entries.push(entry.path)
      if (entry.path === 'package/package.json') entry.on('data', (d: Buffer) => (pkgJson += d.toString()))
      else entry.resume()
    },
  })
  let pkg: { name?: string; version?: string } = {}
  try {
    pkg = JSON.parse(pkgJson)
  } catch {
    throw new VisError('bundle.package', `${file} has no readable package/package.json`, { path: file })
  }
  return { name: String(pkg.name), version: String(pkg.version), entries }
}

export async function checkTarballPrebuilds(
  file: string,
  minors: string[],
  target?: Target,
): Promise<PackedPackage> {
  const pkg = await readTarball(file)
  const want = [
    prebuildPath('vis_loader', PREBUILT_ADDON_FILE, target),
    prebuildPath('vis_confine', PREBUILT_ADDON_FILE, target),
    prebuildPath('vis_seccomp', 'libvis_seccomp.so', target),
    prebuildPath('vis-launcher', 'vis-launcher', target),
    ...minors.map((m) => prebuildPath(`vis_py${m.replace('.', '')}`, PREBUILT_ADDON_FILE, target)),
  ].map((p) => `package/prebuilds/${p}`)
  const have = new Set(pkg.entries)
  const missing = want.filter((p) => !have.has(p))
  if (missing.length) {
    throw new VisError(
      'bundle.package',
      `${file} lacks prebuilt native parts (${missing.map((p) => p.slice('package/prebuilds/'.length)).join(', ')}); ` +
        'run `npm run prebuildify` with every minor staged, then bundle again',
      { path: file },
    )
  }
  return pkg
}
