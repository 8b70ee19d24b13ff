import { readFileSync } from 'node:fs'
import { arch as hostArch, platform as hostPlatform } from 'node:process'
import { VisError } from '../util/errors.js'

// The one seam for platforms. Everything that differs between them is a field of a Target
// below; call sites ask for the target (this machine's, or one named with --platform) and
// never compare process.arch themselves. Adding a platform (macOS, musl) means adding a row
// here and, for the seccomp filter, a case in native/confine/seccomp_arch.h.
export type Target = {
  // python-build-standalone's triple style, so archives from either source share a name.
  tag: string
  // node-gyp-build's directory under prebuilds/<part>/prebuilds/ (process.platform-process.arch).
  nodeTuple: string
  // node-gyp-build's libc tag in the prebuilt addon's file name.
  libc: 'glibc' | 'musl'
  // The multiarch directory the system's shared libraries live in (Debian's triplet): the jail
  // binds /usr/lib/<multiarch> read-only, and a staged tree takes its libraries from there.
  multiarch: string
  // Debian's architecture name, for `apt-get download <pkg>:<debianArch>`.
  debianArch: string
  // The GNU triple of the cross toolchain (`<crossTriple>-g++`) that builds this target elsewhere.
  crossTriple: string
  // What the jail binds read-only for the dynamic loader and the system's shared libraries
  // (the loader's own path differs per architecture; the jail links /lib to usr/lib).
  jailLibs: readonly string[]
  // The audit architecture the seccomp filter admits (linux/audit.h), for reports and tests.
  seccompArch: 'x86_64' | 'aarch64'
  // CPython minors the runtime supports here; the lowest is the default.
  minors: readonly [string, ...string[]]
}

export const TARGETS: readonly Target[] = [
  {
    tag: 'linux-x86_64-gnu',
    nodeTuple: 'linux-x64',
    libc: 'glibc',
    multiarch: 'x86_64-linux-gnu',
    debianArch: 'amd64',
    crossTriple: 'x86_64-linux-gnu',
    jailLibs: ['/usr/lib/x86_64-linux-gnu', '/usr/lib64'],
    seccompArch: 'x86_64',
    minors: ['3.11', '3.12', '3.13'],
  },
  {
    // Debian's arm64 packages carry CPython 3.11 only; the other minors need a build there.
    tag: 'linux-aarch64-gnu',
    nodeTuple: 'linux-arm64',
    libc: 'glibc',
    multiarch: 'aarch64-linux-gnu',
    debianArch: 'arm64',
    crossTriple: 'aarch64-linux-gnu',
    jailLibs: ['/usr/lib/aarch64-linux-gnu', '/usr/lib/ld-linux-aarch64.so.1'],
    seccompArch: 'aarch64',
    minors: ['3.11'],
  },
]

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

// The target this process runs on.
export function hostTarget(): Target {
  const tuple = `${hostPlatform}-${hostArch}`
  const found = libcFlavor() === 'gnu' ? TARGETS.find((t) => t.nodeTuple === tuple) : undefined
  if (!found) {
    throw new VisError(
      'dist.platform',
      `vis-runtime does not support ${tuple}${libcFlavor() === 'musl' ? ' (musl)' : ''} yet; ` +
        `supported: ${TARGETS.map((t) => t.tag).join(', ')}`,
      { platform: hostPlatform, arch: hostArch },
    )
  }
  return found
}

// A target by its tag (`--platform linux-aarch64-gnu`) or node tuple (`linux-arm64`).
export function targetFor(name: string): Target {
  const found = TARGETS.find((t) => t.tag === name || t.nodeTuple === name)
  if (!found) {
    throw new VisError(
      'dist.platform',
      `unknown platform ${name}; use one of ${TARGETS.map((t) => t.tag).join(', ')}`,
      { platform: name },
    )
  }
  return found
}

export function platformTag(): string {
  return hostTarget().tag
}

// Minors the addon is built for on this machine's platform; the lowest is the default.
// Elsewhere (an unsupported platform) the x86_64 list stands, so messages can still name them.
export const SUPPORTED_MINORS: readonly [string, ...string[]] = (() => {
  try {
    return hostTarget().minors
  } catch {
    return TARGETS[0]!.minors
  }
})()

export function isSupportedMinor(minor: string, target?: Target): boolean {
  return (target?.minors ?? SUPPORTED_MINORS).includes(minor)
}

export function minorOf(version: string): string {
  const m = /^(\d+)\.(\d+)/.exec(version)
  if (!m) throw new VisError('dist.version', `not a Python version: ${version}`, { version })
  return `${m[1]}.${m[2]}`
}
