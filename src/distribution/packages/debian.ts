import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { VisError } from '../../util/errors.js'
import type { OnProgress } from '../progress.js'
import { run } from '../tools.js'

// Debian's python3-* packages as a source of real, prebuilt packages (the machines this
// runs on reach Debian's mirror, not PyPI). Their dependency closure is walked here, by
// Debian's own Depends fields, minus what the host or the distribution already provides.

// Never downloaded: the interpreter itself (the distribution is ours), the C and C++
// runtimes and zlib (Node and CPython load them from the host already), GUI toolkits
// (no tkinter in the distribution), documentation JavaScript and system configuration.
const SKIP_EXACT = new Set([
  'python3',
  'python3-minimal',
  'python3-distutils',
  'python3-lib2to3',
  'python3-tk',
  'python3-pil.imagetk',
  'libc6',
  'libgcc-s1',
  'libstdc++6',
  'zlib1g',
  'mime-support',
  'media-types',
  'ca-certificates',
  'debconf',
  'dpkg',
  'sensible-utils',
  'libexpat1',
  'libssl3',
  'libffi8',
  'libbz2-1.0',
  'liblzma5',
  'libsqlite3-0',
])
const SKIP_PREFIX = [
  'python3.',
  'libpython3',
  'libjs-',
  'libtk',
  'libtcl',
  'tk8',
  'tcl8',
  'blt',
  'x11-common',
]

// Hard Depends in Debian that nothing imports when a block uses the package: fonttools'
// font-building helpers (scipy, sympy, pythran and a C++ toolchain behind it), httpx's
// command line (rich, click, pygments), development headers. 120 MB of the closure.
const SKIP_OPTIONAL = new Set([
  'python3-scipy',
  'python3-pythran',
  'python3-sympy',
  'python3-mpmath',
  'python3-fs',
  'python3-ufolib2',
  'python3-defcon',
  'python3-rich',
  'python3-click',
  'python3-pygments',
  'python3-markdown-it',
  'python3-mdurl',
  'python3-all',
  'python3-dev',
  'unicode-data',
])
// Hard Depends that only optional code paths import: installed when asked for by name (or
// by a set that names them), never only because something depends on them. fontTools'
// XML features pull in lxml and, through libxml2, 33 MB of ICU.
const ONLY_WHEN_ASKED = new Set(['python3-lxml'])

const SKIP_TOOLCHAIN = /^(gcc|g\+\+|cpp|binutils|libboost|linux-libc-dev)|-dev$/

export function skippedDeb(name: string): boolean {
  return (
    SKIP_EXACT.has(name) ||
    SKIP_OPTIONAL.has(name) ||
    SKIP_TOOLCHAIN.test(name) ||
    SKIP_PREFIX.some((p) => name.startsWith(p))
  )
}

export type DebInfo = {
  name: string
  version: string
  architecture: string
  size: number
  // Each entry is a group of alternatives (a | b), package names only.
  depends: string[][]
  // Virtual names it stands for (python3-numpy provides python3-numpy-abi9).
  provides: string[]
}

// One stanza of `apt-cache show`.
export function parseStanza(text: string): DebInfo | undefined {
  const field = (k: string) => new RegExp(`^${k}: (.*)$`, 'm').exec(text)?.[1]?.trim()
  const name = field('Package')
  const version = field('Version')
  if (!name || !version) return undefined
  const deps = [field('Pre-Depends'), field('Depends')].filter((d): d is string => !!d).join(', ')
  const depends = deps
    .split(',')
    .map((group) =>
      group
        .split('|')
        // "python3 (>= 3.11~)", "python3.11:any" -> the bare package name
        .map((alt) =>
          alt
            .trim()
            .replace(/\s*\(.*\)$/, '')
            .replace(/:\w+$/, ''),
        )
        .filter(Boolean),
    )
    .filter((g) => g.length > 0)
  const provides = (field('Provides') ?? '')
    .split(',')
    .map((x) => x.trim().replace(/\s*\(.*\)$/, ''))
    .filter(Boolean)
  return {
    name,
    version,
    provides,
    architecture: field('Architecture') ?? 'all',
    size: Number(field('Size') ?? 0),
    depends,
  }
}

async function show(names: string[]): Promise<Map<string, DebInfo>> {
  const out = new Map<string, DebInfo>()
  if (names.length === 0) return out
  let text: string
  try {
    text = await run('apt-cache', ['show', '--no-all-versions', ...names], { code: 'dist.packages' })
  } catch (err) {
    // One unknown or purely virtual name fails the batch: ask one by one.
    if (names.length === 1) return out
    for (const n of names) for (const [k, v] of await show([n])) out.set(k, v)
    void err
    return out
  }
  for (const stanza of text.split(/\n\n+/)) {
    const info = parseStanza(stanza)
    if (info && !out.has(info.name)) out.set(info.name, info)
  }
  return out
}

// The closure of `roots` over Depends, taking the first installable alternative of
// each group and leaving out what skippedDeb names. Breadth-first, one apt-cache call
// per level.
export async function resolveClosure(roots: readonly string[]): Promise<DebInfo[]> {
  const found = new Map<string, DebInfo>()
  const missing: string[] = []
  let level = [...new Set(roots)]
  const seen = new Set(level)
  const provided = new Set<string>()
  while (level.length > 0) {
    const infos = await show(level)
    const next: string[] = []
    const chooseLater: string[][] = []
    for (const name of level) {
      const info = infos.get(name)
      if (!info) {
        missing.push(name)
        continue
      }
      found.set(name, info)
      for (const v of info.provides) provided.add(v)
      for (const group of info.depends) {
        if (group.some((alt) => skippedDeb(alt) || found.has(alt) || seen.has(alt))) continue
        if (group.some((alt) => ONLY_WHEN_ASKED.has(alt))) continue
        chooseLater.push(group)
      }
    }
    // An alternative group: its first member that apt knows as a real package (a
    // purely virtual name such as libblas.so.3 has no stanza).
    const firsts = await show([...new Set(chooseLater.map((g) => g[0]!))])
    for (const group of chooseLater) {
      if (group.some((alt) => seen.has(alt) || provided.has(alt))) continue
      const pick = firsts.has(group[0]!) ? group[0]! : await firstReal(group.slice(1))
      if (!pick) {
        missing.push(group.join(' | '))
        continue
      }
      seen.add(pick)
      next.push(pick)
    }
    level = next
  }
  const rootsMissing = missing.filter((m) => roots.includes(m))
  if (missing.length > 0) {
    throw new VisError(
      'dist.packages',
      `apt does not know ${missing.join(', ')}${rootsMissing.length ? '' : ' (a dependency)'}; run "apt-get update" on a Debian 12 machine`,
      { missing },
    )
  }
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name))
}

async function firstReal(names: string[]): Promise<string | undefined> {
  for (const n of names) if ((await show([n])).size > 0) return n
  return undefined
}

// The CPython minor Debian's python3 packages are built for ("3.11" on Debian 12).
export async function debianPythonMinor(): Promise<string | undefined> {
  const info = (await show(['python3'])).get('python3')
  const dep = info?.depends.flat().find((d) => /^python3\.\d+$/.test(d))
  return dep?.slice('python'.length)
}

// The file apt-get download writes for a package: name_version_arch.deb with the
// epoch's colon escaped.
export function debFileName(info: DebInfo): string {
  return `${info.name}_${info.version.replace(/:/g, '%3a')}_${info.architecture}.deb`
}

// Downloads what is not in cacheDir yet (apt-get download, no root needed) and returns
// the path of each package's .deb.
export async function downloadDebs(
  infos: readonly DebInfo[],
  cacheDir: string,
  onProgress: OnProgress,
): Promise<Map<string, string>> {
  mkdirSync(cacheDir, { recursive: true })
  const have = new Set(readdirSync(cacheDir))
  const need = infos.filter((i) => !have.has(debFileName(i)))
  if (need.length > 0) {
    const mb = need.reduce((s, i) => s + i.size, 0) / 1024 / 1024
    onProgress({ step: 'packages', detail: `apt-get download ${need.length} packages (${mb.toFixed(1)} MB)` })
    try {
      await run('apt-get', ['download', ...need.map((i) => `${i.name}=${i.version}`)], {
        cwd: cacheDir,
        timeoutMs: 600_000,
        code: 'dist.packages',
      })
    } catch (err) {
      throw new VisError(
        'dist.packages',
        `could not download ${need.map((i) => i.name).join(', ')} with apt-get (run "apt-get update" first?): ${(err as Error).message}`,
        { path: cacheDir },
      )
    }
  }
  const files = new Map<string, string>()
  for (const i of infos) {
    const f = join(cacheDir, debFileName(i))
    if (!existsSync(f)) {
      throw new VisError('dist.packages', `apt-get download did not produce ${debFileName(i)}`, {
        path: cacheDir,
      })
    }
    files.set(i.name, f)
  }
  return files
}

// Unpacks every .deb into one directory that stands for the root of a Debian system,
// so absolute symlinks between packages (mpl-data -> /usr/share/..., fonts) resolve.
export async function extractAll(files: Iterable<string>, into: string): Promise<void> {
  mkdirSync(into, { recursive: true })
  for (const f of files) await run('dpkg-deb', ['-x', f, into], { code: 'dist.packages' })
}

// "numpy 1.24.2-1+deb12u1": the label without the epoch and the python3- prefix.
export function debLabel(info: DebInfo): string {
  return `${info.name.replace(/^python3-/, '')} ${info.version.replace(/^\d+:/, '')}`
}
