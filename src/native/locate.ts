// Where the native parts are found: an override directory, the prebuilds a package ships,
// and the local cmake-js build. Prebuilds use the prebuildify layout with ONE directory per
// part, because node-gyp-build picks a single .node file per directory by its tags:
//   prebuilds/<part>/prebuilds/<platform>-<arch>/node.napi.glibc.node   (addons)
//   prebuilds/<part>/prebuilds/<platform>-<arch>/<file>                 (launcher, seccomp library)
import { existsSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { hostTarget, type Target } from '../distribution/platform.js'
import { packageRoot } from '../util/home.js'

const require = createRequire(import.meta.url)

// The file a prebuilt addon gets: node-gyp-build's tags (any Node with N-API, glibc).
export const PREBUILT_ADDON_FILE = 'node.napi.glibc.node'

export const prebuildsRoot = (): string => join(packageRoot, 'prebuilds')
export const localBuildDir = (): string => join(packageRoot, 'build', 'Release')

// The directory node-gyp-build is pointed at for one part.
export function partDir(part: string): string {
  return join(prebuildsRoot(), part)
}

// The one place a prebuild's path is decided: prebuilds/<part>/prebuilds/<nodeTuple>/<file>, where
// file is node-gyp-build's tagged name for an addon and the plain name otherwise. On a platform
// with no target (which has no prebuilds either) node's own tuple is looked under, and not found.
export function prebuildTuple(target?: Target): string {
  if (target) return target.nodeTuple
  try {
    return hostTarget().nodeTuple
  } catch {
    return `${process.platform}-${process.arch}`
  }
}

export function prebuildPath(part: string, file: string, target?: Target): string {
  return `${part}/prebuilds/${prebuildTuple(target)}/${file}`
}

// prebuilds/<part>/prebuilds/<platform>-<arch>: where this machine's file of a part lives.
export function partPlatformDir(part: string, root = prebuildsRoot()): string {
  return join(root, part, 'prebuilds', prebuildTuple())
}

type NodeGypBuild = { resolve(dir: string): string }
let ngb: NodeGypBuild | undefined

// The prebuilt .node file node-gyp-build picks for this platform, Node and libc, if any.
export function prebuiltAddon(name: string): string | undefined {
  const dir = partDir(name)
  if (!existsSync(dir)) return undefined
  ngb ??= require('node-gyp-build') as NodeGypBuild
  try {
    return ngb.resolve(dir)
  } catch {
    // "No native build was found for platform=... abi=... libc=...": none matches here.
    return undefined
  }
}

// A prebuilt plain file (an executable or a shared library): its platform dir only.
export function prebuiltFile(part: string, file: string): string | undefined {
  const p = join(partPlatformDir(part), file)
  return existsSync(p) ? p : undefined
}

export type Candidate = { file: string; origin: 'override' | 'prebuild' | 'build' }

// Picks one: an override always wins; otherwise a local build newer than the prebuild wins
// (a developer who just ran build:addon means to test that build), else the prebuild.
export function pick(candidates: Candidate[]): string | undefined {
  const override = candidates.find((c) => c.origin === 'override')
  if (override) return override.file
  const prebuild = candidates.find((c) => c.origin === 'prebuild')
  const build = candidates.find((c) => c.origin === 'build')
  if (prebuild && build) {
    return statSync(build.file).mtimeMs > statSync(prebuild.file).mtimeMs ? build.file : prebuild.file
  }
  return (prebuild ?? build)?.file
}

// Every place a part may be, existing ones only, in search order. An existing override is
// taken alone: node-gyp-build is not consulted, so a jail that can read only the one file
// (and no node_modules) finds it.
export function candidates(opts: {
  overrideFile?: string
  prebuild: () => string | undefined
  buildFile: string
}): Candidate[] {
  if (opts.overrideFile && existsSync(opts.overrideFile))
    return [{ file: opts.overrideFile, origin: 'override' }]
  const out: Candidate[] = []
  const prebuild = opts.prebuild()
  if (prebuild) out.push({ file: prebuild, origin: 'prebuild' })
  if (existsSync(opts.buildFile)) out.push({ file: opts.buildFile, origin: 'build' })
  return out
}

// The parts every install needs besides one runtime addon per Python minor.
const CORE_PARTS: [part: string, file?: string][] = [
  ['vis_loader'],
  ['vis_confine'],
  ['vis_seccomp', 'libvis_seccomp.so'],
  ['vis-launcher', 'vis-launcher'],
]

export type PrebuildMatch = {
  found: { part: string; file: string }[]
  // Core parts with no prebuild for this platform, Node and libc.
  missing: string[]
  // Python minors with a prebuilt runtime addon here.
  minors: string[]
}

// What the shipped prebuilds offer this machine (postinstall decides from it whether to compile).
export function matchPrebuilds(minors: readonly string[]): PrebuildMatch {
  const out: PrebuildMatch = { found: [], missing: [], minors: [] }
  for (const [part, file] of CORE_PARTS) {
    const hit = file ? prebuiltFile(part, file) : prebuiltAddon(part)
    if (hit) out.found.push({ part, file: hit })
    else out.missing.push(part)
  }
  for (const minor of minors) {
    const part = `vis_py${minor.replace('.', '')}`
    const hit = prebuiltAddon(part)
    if (hit) {
      out.found.push({ part, file: hit })
      out.minors.push(minor)
    }
  }
  return out
}
