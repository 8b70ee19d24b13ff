import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
} from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'

// Copies a directory out of an unpacked Debian root into the distribution, following
// symlinks inside that root (absolute ones too: /usr/share/... means <sysroot>/usr/share/...),
// so the tree stands alone. A link whose target is in no unpacked package but exists on
// the host under `hostLinks` (the CA bundle certifi points at) stays a link to it; any
// other dangling link is reported and left out.
export type CopyReport = { hostLinks: string[]; dangling: string[] }

export function copyFromSysroot(
  src: string,
  dst: string,
  sysroot: string,
  opts: { skipDir?: (name: string) => boolean; hostLinks?: readonly string[] } = {},
): CopyReport {
  const report: CopyReport = { hostLinks: [], dangling: [] }
  const hostOk = (t: string) => (opts.hostLinks ?? []).some((h) => t === h || t.startsWith(`${h}/`))

  // Where a path inside the sysroot really lives (symlinks followed inside it); undefined
  // when it leads nowhere there.
  const realIn = (p: string, depth = 0): string | undefined => {
    if (depth > 40) return undefined
    let st: ReturnType<typeof lstatSync>
    try {
      st = lstatSync(p)
    } catch {
      return undefined
    }
    if (!st.isSymbolicLink()) return p
    const target = readlinkSync(p)
    const next = isAbsolute(target) ? join(sysroot, target) : resolve(dirname(p), target)
    return realIn(next, depth + 1)
  }

  const walk = (from: string, to: string, depth: number): void => {
    const real = realIn(from)
    if (real === undefined) {
      const target = readlinkSync(from)
      if (isAbsolute(target) && hostOk(target) && existsSync(target)) {
        symlinkSync(target, to)
        report.hostLinks.push(`${to} -> ${target}`)
      } else report.dangling.push(`${from} -> ${target}`)
      return
    }
    const st = lstatSync(real)
    if (st.isDirectory()) {
      if (depth > 64) return
      mkdirSync(to, { recursive: true })
      for (const name of readdirSync(real)) {
        if (opts.skipDir?.(name) && lstatSync(join(real, name)).isDirectory()) continue
        walk(join(real, name), join(to, name), depth + 1)
      }
    } else if (st.isFile()) {
      mkdirSync(dirname(to), { recursive: true })
      copyFileSync(real, to)
    }
  }
  walk(src, dst, 0)
  return report
}
