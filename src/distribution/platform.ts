import { readFileSync } from 'node:fs'
import { arch, platform } from 'node:process'
import { VisError } from '../util/errors.js'

// The one seam for platform naming. Tags follow python-build-standalone's
// triple style so archives from either source share a name.
export function platformTag(): string {
  if (platform === 'linux' && arch === 'x64') return `linux-x86_64-${libcFlavor()}`
  if (platform === 'linux' && arch === 'arm64') return `linux-aarch64-${libcFlavor()}`
  throw new VisError('dist.platform', `vis-runtime does not support ${platform}-${arch} yet`, {
    platform,
    arch,
  })
}

let flavor: 'gnu' | 'musl' | undefined

// The libc this very process runs on (musl's loader is mapped under its own
// name). Cheaper than process.report, which costs ~12 ms.
function libcFlavor(): 'gnu' | 'musl' {
  if (!flavor) {
    let maps = ''
    try {
      maps = readFileSync('/proc/self/maps', 'utf8')
    } catch {
      // No /proc: assume the common case.
    }
    flavor = /ld-musl-/.test(maps) ? 'musl' : 'gnu'
  }
  return flavor
}

// Minors the addon is built for; the lowest is the default.
export const SUPPORTED_MINORS = ['3.11', '3.12', '3.13'] as const

export function isSupportedMinor(minor: string): boolean {
  return (SUPPORTED_MINORS as readonly string[]).includes(minor)
}

export function minorOf(version: string): string {
  const m = /^(\d+)\.(\d+)/.exec(version)
  if (!m) throw new VisError('dist.version', `not a Python version: ${version}`, { version })
  return `${m[1]}.${m[2]}`
}
