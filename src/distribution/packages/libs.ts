import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { VisError } from '../../util/errors.js'
import { hostTarget, type Target } from '../platform.js'
import { listFiles } from '../slim.js'
import { run } from '../tools.js'

// Shared libraries the installed extension modules need (libopenblas, libjpeg,
// libfreetype, libxml2...) are copied from the unpacked packages into the distribution's
// lib/deps/, and every object that needs one finds it through an $ORIGIN-relative
// RUNPATH, as bin/ finds libpython: the tree moves as a whole and the jail needs no
// new host paths. What no unpacked package has must be on the host already (glibc,
// libstdc++, zlib: Node and CPython load them from there too).

// The system library directories of a target (platform.ts names its multiarch directory).
const hostLibDirs = (t: Target): string[] => [
  `/usr/lib/${t.multiarch}`,
  `/lib/${t.multiarch}`,
  '/usr/lib64',
  '/usr/lib',
]

export const DEPS_DIR = 'deps'

function isElf(path: string): boolean {
  try {
    const head = readFileSync(path).subarray(0, 4)
    return head.length === 4 && head[0] === 0x7f && head.toString('latin1', 1, 4) === 'ELF'
  } catch {
    return false
  }
}

// NEEDED entries of several objects in one readelf run.
export async function neededOf(files: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  for (let i = 0; i < files.length; i += 200) {
    const chunk = files.slice(i, i + 200)
    const text = await run('readelf', ['-d', '-W', ...chunk], { code: 'dist.packages' })
    // With several files readelf heads each section with "File: <path>".
    const parts = chunk.length === 1 ? [`File: ${chunk[0]}\n${text}`] : text.split(/^(?=File: )/m)
    for (const part of parts) {
      const file = /^File: (.*)$/m.exec(part)?.[1]?.trim()
      if (!file) continue
      const needed = [...part.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]!)
      out.set(file, needed)
    }
  }
  return out
}

// soname -> file, for every shared object under the unpacked packages' lib dirs (the
// BLAS/LAPACK alternatives live in subdirectories such as blas/ and lapack/).
export function indexSysroot(sysroot: string, target: Target = hostTarget()): Map<string, string> {
  const index = new Map<string, string>()
  for (const d of [`usr/lib/${target.multiarch}`, `lib/${target.multiarch}`, 'usr/lib']) {
    const dir = join(sysroot, d)
    if (!existsSync(dir)) continue
    const files = listFiles(dir, (n) => /\.so(\.\d+)*$/.test(n)).sort(
      (a, b) => a.split('/').length - b.split('/').length,
    )
    for (const f of files) if (!index.has(basename(f))) index.set(basename(f), f)
  }
  // Symlinked sonames (libfoo.so.1 -> libfoo.so.1.2.3): listFiles skips links, so add them.
  for (const d of [`usr/lib/${target.multiarch}`, `lib/${target.multiarch}`]) {
    const dir = join(sysroot, d)
    if (!existsSync(dir)) continue
    for (const sub of walkDirs(dir)) {
      for (const e of readdirSync(sub, { withFileTypes: true })) {
        if (e.isSymbolicLink() && !index.has(e.name)) index.set(e.name, join(sub, e.name))
      }
    }
  }
  return index
}

function walkDirs(dir: string): string[] {
  const out = [dir]
  for (const e of readdirSync(dir, { withFileTypes: true }))
    if (e.isDirectory()) out.push(...walkDirs(join(dir, e.name)))
  return out
}

function onHost(soname: string, target: Target): boolean {
  return hostLibDirs(target).some((d) => existsSync(join(d, soname)))
}

export type LibReport = { copied: string[]; fromHost: string[] }

// Copies the libraries the ELF objects under sitePackages need into <lib>/deps and points
// each object at them. libDir is the distribution's lib/.
export async function placeSharedLibs(
  sitePackages: string,
  libDir: string,
  sysroot: string,
  target: Target = hostTarget(),
): Promise<LibReport> {
  const depsDir = join(libDir, DEPS_DIR)
  const objects = listFiles(sitePackages, (n) => /\.so(\.\d+)*$/.test(n)).filter(isElf)
  const index = indexSysroot(sysroot, target)
  const copied = new Set<string>()
  const fromHost = new Set<string>()
  const missing: string[] = []
  const needs = await neededOf(objects)
  const patch = new Set<string>()
  let queue = [...needs.entries()]
  while (queue.length > 0) {
    const fresh: string[] = []
    for (const [file, needed] of queue) {
      for (const so of needed) {
        if (so.startsWith('libpython')) continue
        if (copied.has(so)) {
          patch.add(file)
          continue
        }
        const src = index.get(so)
        if (src) {
          mkdirSync(depsDir, { recursive: true })
          const dst = join(depsDir, so)
          copyFileSync(src, dst) // follows the soname link to the real file
          copied.add(so)
          fresh.push(dst)
          patch.add(file)
        } else if (onHost(so, target)) fromHost.add(so)
        else missing.push(`${so} (needed by ${basename(file)})`)
      }
    }
    queue = fresh.length ? [...(await neededOf(fresh)).entries()] : []
  }
  if (missing.length > 0) {
    throw new VisError(
      'dist.packages',
      `shared libraries found neither in the downloaded packages nor on this machine: ${[...new Set(missing)].join(', ')}`,
      { path: sitePackages },
    )
  }
  for (const file of patch) {
    const rel = relative(dirname(file), depsDir)
    await run('patchelf', ['--set-rpath', rel === '' ? '$ORIGIN' : `$ORIGIN/${rel}`, file], {
      code: 'dist.packages',
    })
  }
  return { copied: [...copied].sort(), fromHost: [...fromHost].sort() }
}
