import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { packageRoot, visHome } from '../util/home.js'
import { platformTag } from './platform.js'

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

export const defaultDistDir = (): string => join(packageRoot, 'cpython-dist')

// The minors staged under a cpython-dist/ directory, lowest first.
export function stagedMinors(out = defaultDistDir()): string[] {
  if (!existsSync(out)) return []
  return readdirSync(out)
    .filter((n) => /^\d+\.\d+$/.test(n))
    .sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]))
}

// The per-user cache: VIS_HOME (default ~/.vis) / python/runtime/<minor>/<platform>/python.
export function cacheRoot(minor: string, platform = platformTag()): string {
  return join(visHome(), 'python', 'runtime', minor, platform, 'python')
}
