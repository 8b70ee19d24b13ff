import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { VisError } from '../util/errors.js'
import { candidates, localBuildDir, partPlatformDir, pick, prebuiltAddon } from './locate.js'

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
    readOnlyRoots?: string[]
    readOnlyWhy?: string
    network: boolean
    allow?: string[]
    processes: boolean
    ctypes: boolean
  }): void
  setWriteRefusal(why: string): void
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

// Where an addon is looked for, in order: VIS_ADDON_DIR (tests, packagers), the prebuild
// the package ships (node-gyp-build layout, src/native/locate.ts), the local build.
export function addonDirs(name = '<addon>'): string[] {
  const dirs = [partPlatformDir(name), localBuildDir()]
  if (process.env.VIS_ADDON_DIR) dirs.unshift(process.env.VIS_ADDON_DIR)
  return dirs
}

// The file to load for an addon, or undefined when none exists anywhere.
export function addonFile(name: string): string | undefined {
  const override = process.env.VIS_ADDON_DIR
  return pick(
    candidates({
      overrideFile: override ? join(override, `${name}.node`) : undefined,
      prebuild: () => prebuiltAddon(name),
      buildFile: join(localBuildDir(), `${name}.node`),
    }),
  )
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
      { searched: addonDirs(name) },
    )
  }
  return require(file) as T
}

export function loadLoader(): LoaderAddon {
  return requireAddon<LoaderAddon>('vis_loader', 'the loader addon')
}

// The minor a runtime addon was compiled for, read from its bytes (a marker string the
// build puts in), or undefined for an addon built before the marker existed.
export function addonMinorMarker(file: string): string | undefined {
  const bytes = readFileSync(file)
  const at = bytes.indexOf('vis-python-minor=')
  if (at < 0) return undefined
  const end = bytes.indexOf(';', at)
  return bytes.subarray(at + 'vis-python-minor='.length, end).toString('latin1')
}

// Checked BEFORE anything is required: loading an addon built for another minor binds the
// wrong PyConfig layout and can crash the process, so a mislabelled file is refused unread.
export function runtimeAddonPath(minor: string): string {
  const name = runtimeAddonName(minor)
  const file = addonFile(name)
  if (!file) {
    throw new VisError(
      'native.addon-missing',
      `no runtime addon for Python ${minor} (${name}.node); reinstall vis-runtime to get its prebuilds, or stage that Python and run \`${BUILD_COMMAND}\``,
      { minor, searched: addonDirs(name) },
    )
  }
  const built = addonMinorMarker(file)
  if (built !== undefined && built !== minor) throw wrongMinor(file, minor, built)
  return file
}

function wrongMinor(file: string, minor: string, built: string): VisError {
  return new VisError(
    'native.version-mismatch',
    `${file} is the runtime addon for Python ${built}, but it stands where the one for Python ${minor} belongs; ` +
      `reinstall vis-runtime (its prebuilds are per minor), or in a checkout rebuild with \`${BUILD_COMMAND}\``,
    { path: file, minor, built },
  )
}

export function requireRuntime(minor: string): RuntimeAddon {
  const file = runtimeAddonPath(minor)
  const addon = require(file) as RuntimeAddon
  const built = addon.pythonMinor()
  if (built !== minor) throw wrongMinor(file, minor, built)
  return addon
}
