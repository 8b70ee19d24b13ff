import { createRequire } from 'node:module'
import { join } from 'node:path'
import { candidates, localBuildDir, pick, prebuiltAddon, prebuiltFile } from '../native/locate.js'

// The confinement parts: the part directory a package ships each one in (prebuilds/<part>/)
// and the file name the local build gives it.
const PARTS: Record<string, string> = {
  'vis_confine.node': 'vis_confine',
  'vis-launcher': 'vis-launcher',
  'libvis_seccomp.so': 'vis_seccomp',
}

// Where a confinement binary is found: VIS_CONFINE_DIR (a development build; the tool jail
// names its one readable file with VIS_CONFINE_ADDON instead), the prebuild, the cmake-js output.
export function findNative(file: string): string | undefined {
  const part = PARTS[file]
  const override = process.env.VIS_CONFINE_DIR
  let overrideFile = override ? join(override, file) : undefined
  if (file === 'vis_confine.node' && process.env.VIS_CONFINE_ADDON)
    overrideFile = process.env.VIS_CONFINE_ADDON
  const prebuild = () =>
    !part ? undefined : file.endsWith('.node') ? prebuiltAddon(part) : prebuiltFile(part, file)
  return pick(candidates({ overrideFile, prebuild, buildFile: join(localBuildDir(), file) }))
}

export function launcherPath(): string | undefined {
  return findNative('vis-launcher')
}

export type SeccompOptions = { processes: boolean; network: boolean }
export type SeccompReport = { ok: boolean; threads: number; unfiltered: number[] }

export type ConfineAddon = {
  installSeccomp(options: SeccompOptions): void
  verifySeccomp(): SeccompReport
  seccompAvailable(): boolean
  landlockAbi(): number
  // One extended attribute of the path itself (lgetxattr); null when it has none.
  getXattr(path: string, name: string): Buffer | null
  // openat2(2) (confinement/beneath.ts): an fd, or throws an Error with `errno`. Absent from an
  // addon built before it existed.
  openAt2?(dirfd: number, path: string, flags: number, resolve: number, mode: number): number
  // The pid at the other end of a connected unix socket (SO_PEERCRED); 0 outside our pid
  // namespace. Absent from an addon built before it existed.
  peerPid?(fd: number): number
}

let cached: ConfineAddon | null | undefined

// undefined when vis_confine.node has not been built.
export function loadConfineAddon(): ConfineAddon | undefined {
  if (cached !== undefined) return cached ?? undefined
  const path = findNative('vis_confine.node')
  cached = path ? (createRequire(import.meta.url)(path) as ConfineAddon) : null
  return cached ?? undefined
}
