import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { packageRoot } from '../util/home.js'

// Where the confinement binaries live: VIS_CONFINE_DIR for a development build,
// then the cmake-js output, then prebuilds.
export function nativeDirs(): string[] {
  const dirs = [join(packageRoot, 'build', 'Release'), join(packageRoot, 'prebuilds', 'linux-x64')]
  const override = process.env.VIS_CONFINE_DIR
  return override ? [override, ...dirs] : dirs
}

export function findNative(file: string): string | undefined {
  for (const dir of nativeDirs()) {
    const candidate = join(dir, file)
    if (existsSync(candidate)) return candidate
  }
  return undefined
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
}

let cached: ConfineAddon | null | undefined

// undefined when vis_confine.node has not been built.
export function loadConfineAddon(): ConfineAddon | undefined {
  if (cached !== undefined) return cached ?? undefined
  const path = findNative('vis_confine.node')
  cached = path ? (createRequire(import.meta.url)(path) as ConfineAddon) : null
  return cached ?? undefined
}
