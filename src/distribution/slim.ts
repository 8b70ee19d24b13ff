import { cpSync, readdirSync } from 'node:fs'
import { basename, join, relative, sep } from 'node:path'

// Directories never shipped: test suites, GUI tools, the bundled pip
// installer, and third-party package dirs (site-packages is ours to fill).
const DROP_DIRS = new Set([
  'test',
  'tests',
  'idle_test',
  'idlelib',
  'tkinter',
  'turtledemo',
  'ensurepip',
  '__pycache__',
  'site-packages',
  'dist-packages',
])

// Extension modules that exist to test CPython itself, or that poke holes in
// the audit hook story (runtime-notes §5).
const DROP_EXTENSIONS =
  /^(_test|_ctypes_test|_xxsubinterpreters|_xxinterpchannels|_xxtestfuzz|xxlimited|xxsubtype|_tkinter)/

// Site hooks a distro drops into the stdlib are code we do not control.
const DROP_FILES = new Set(['sitecustomize.py', 'usercustomize.py'])

export function keepStdlibEntry(stdlibRoot: string, path: string): boolean {
  const rel = relative(stdlibRoot, path)
  if (rel === '') return true
  const parts = rel.split(sep)
  const name = basename(path)
  if (parts.some((p) => DROP_DIRS.has(p))) return false
  // config-3.X-<triple>/ holds the static library and Makefile: build-only.
  if (parts.length >= 1 && parts[0]!.startsWith('config-')) return false
  if (parts[0] === 'lib-dynload' && DROP_EXTENSIONS.test(name)) return false
  if (parts.length === 1 && DROP_FILES.has(name)) return false
  return true
}

// Copies the stdlib without what keepStdlibEntry rejects. Symlinks are
// followed: a distro's stdlib may point outside itself (Debian's
// sitecustomize -> /etc), and the tree must stand alone.
export function copyStdlib(from: string, to: string): void {
  cpSync(from, to, {
    recursive: true,
    dereference: true,
    preserveTimestamps: true,
    filter: (src) => keepStdlibEntry(from, src),
  })
}

export function copyExtensionDir(from: string, to: string): void {
  cpSync(from, to, {
    recursive: true,
    dereference: true,
    filter: (src) => src === from || !DROP_EXTENSIONS.test(basename(src)),
  })
}

export function listFiles(dir: string, pred: (name: string) => boolean): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...listFiles(p, pred))
    else if (entry.isFile() && pred(entry.name)) out.push(p)
  }
  return out
}
