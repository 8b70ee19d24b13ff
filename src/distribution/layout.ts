import { join } from 'node:path'

// Paths inside a distribution root (the `python/` directory of the
// python-build-standalone install_only layout).
export function treePaths(root: string, minor: string) {
  const lib = join(root, 'lib')
  const stdlib = join(lib, `python${minor}`)
  return {
    root,
    bin: join(root, 'bin'),
    executable: join(root, 'bin', `python${minor}`),
    lib,
    libpython: join(lib, `libpython${minor}.so.1.0`),
    stdlib,
    libDynload: join(stdlib, 'lib-dynload'),
    sitePackages: join(stdlib, 'site-packages'),
    include: join(root, 'include', `python${minor}`),
    manifest: join(root, 'vis-dist.json'),
  }
}

export type TreePaths = ReturnType<typeof treePaths>

// Where staged trees and archives live under a cpython-dist/ directory.
export function stagedTreeRoot(distDir: string, minor: string, platform: string): string {
  return join(distDir, minor, platform, 'python')
}

export function archiveName(version: string, platform: string): string {
  return `cpython-${version}-${platform}.tar.gz`
}

// The manifest for an archive; the per-minor alias lets a downloader that
// only knows the minor find the newest archive for it.
export function archiveManifestName(versionOrMinor: string, platform: string): string {
  return `cpython-${versionOrMinor}-${platform}.json`
}
