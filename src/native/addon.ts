import { existsSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { VisError } from '../util/errors.js'
import { packageRoot } from '../util/home.js'

const require = createRequire(import.meta.url)
export const BUILD_COMMAND = 'npm run build:addon'

export type LoaderAddon = {
  load(libpython: string): boolean
  version(): string
  loadedPath(): string | null
}

export type RuntimeAddon = {
  pythonMinor(): string
  interruptSignal(): number
  start(
    opts: {
      home: string
      distRoot: string
      executable: string
      readRoots: string[]
      sysPath: string[]
      argv: string[]
      capture: boolean
      audit: boolean
      cli?: boolean
    },
    onEvent: (kind: number, job: number, call: number, a: string, b: string | [number, string][]) => void,
  ): void
  submit(kind: number, id: number, a: string, b: string, c: string): void
  interrupt(job?: number): boolean
  hostReply(call: number, reply: string): boolean
  takeOutput(job?: number): { stdout: string; stderr: string } | null
  installPolicy(p: {
    readOnly: string[]
    readWrite: string[]
    network: boolean
    allow?: string[]
    processes: boolean
    ctypes: boolean
  }): void
  wireStart(
    fd: number,
    workOps: string[],
    module: string,
    fn: string,
    limits?: { maxFrameChars?: number; maxDepth?: number; spinUs?: number },
  ): void
  wireWrite(line: string): boolean
  ref(): void
  unref(): void
}

// Where addons are looked for: prebuilds for this platform first, then the local build.
// VIS_ADDON_DIR puts one directory in front (tests, packagers).
export function addonDirs(): string[] {
  const dirs = [
    join(packageRoot, 'prebuilds', `${process.platform}-${process.arch}`),
    join(packageRoot, 'build', 'Release'),
  ]
  if (process.env.VIS_ADDON_DIR) dirs.unshift(process.env.VIS_ADDON_DIR)
  return dirs
}

// The first directory that has it, except that a local build newer than the prebuild
// wins (a developer who just ran build:addon means to test that build).
export function addonFile(name: string): string | undefined {
  const found = addonDirs()
    .map((dir) => join(dir, `${name}.node`))
    .filter((f) => existsSync(f))
  const [first, ...rest] = found
  if (!first) return undefined
  const local = rest.at(-1)
  if (
    !process.env.VIS_ADDON_DIR &&
    local &&
    local !== first &&
    statSync(local).mtimeMs > statSync(first).mtimeMs
  ) {
    return local
  }
  return first
}

export function runtimeAddonName(minor: string): string {
  return `vis_py${minor.replace('.', '')}`
}

function requireAddon<T>(name: string, what: string): T {
  const file = addonFile(name)
  if (!file) {
    throw new VisError(
      'native.addon-missing',
      `${what} (${name}.node) is not built; run \`${BUILD_COMMAND}\` (it builds one addon per staged Python)`,
      { searched: addonDirs() },
    )
  }
  return require(file) as T
}

export function loadLoader(): LoaderAddon {
  return requireAddon<LoaderAddon>('vis_loader', 'the loader addon')
}

// Checked by file name BEFORE anything is required: a wrong-minor addon would segfault.
export function runtimeAddonPath(minor: string): string {
  const file = addonFile(runtimeAddonName(minor))
  if (!file) {
    throw new VisError(
      'native.addon-missing',
      `no runtime addon for Python ${minor} (${runtimeAddonName(minor)}.node); stage that Python and run \`${BUILD_COMMAND}\``,
      { minor, searched: addonDirs() },
    )
  }
  return file
}

export function requireRuntime(minor: string): RuntimeAddon {
  const addon = require(runtimeAddonPath(minor)) as RuntimeAddon
  const built = addon.pythonMinor()
  if (built !== minor) {
    throw new VisError(
      'native.version-mismatch',
      `${runtimeAddonName(minor)}.node was built for Python ${built}, not ${minor}; run \`${BUILD_COMMAND}\``,
      { minor, built },
    )
  }
  return addon
}
