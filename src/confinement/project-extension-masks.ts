import { closeSync, lstatSync, openSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { realish } from '../util/real-path.js'
import { O_DIRECTORY, O_PATH, type OpenedRoot } from './root-guard.js'

// A project's extension folder at the top of a root (`<root>/.vis/extensions`, there now as a real
// folder): masked in every jail whatever the engine's project, so no session writes code that a
// later `vis run` in that folder would load on the host. Defence in depth: what loads is gated
// by the person's trust (src/extensions/trust.ts), which also covers folders made after the jail
// started. Where `.vis/extensions` is a link, a mask on it would sit on the link's target and
// leave the link itself to be replaced: the whole `.vis` folder holding the link is masked instead.
// (What loads is the copy trust made in the vis home, so the target stays the person's to edit.)
export function projectExtensionMasks(roots: readonly OpenedRoot[]): string[] {
  const out: string[] = []
  for (const r of roots) {
    const kind = (rel: string) => {
      try {
        const st = lstatSync(`/proc/self/fd/${r.fd}/${rel}`)
        return st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : 'other'
      } catch {
        return 'none'
      }
    }
    if (r.fd < 0 || kind('.vis') !== 'dir') continue
    const ext = kind('.vis/extensions')
    if (ext === 'dir') out.push(join(r.path, '.vis', 'extensions'))
    else if (ext === 'link') out.push(join(r.path, '.vis'))
  }
  return out
}

// The same by path, for a session's policy (engine/worker-start.ts): the host file tools hide the
// folder as the jail does, and a blank draft's empty lower layer gets its mount point.
export function projectExtensionMasksFor(roots: readonly string[]): string[] {
  const out: string[] = []
  for (const r of roots) {
    let fd = -1
    try {
      fd = openSync(resolve(r), O_PATH | O_DIRECTORY)
      out.push(...projectExtensionMasks([{ path: resolve(r), real: realish(r), fd }]))
    } catch {
    } finally {
      if (fd >= 0) closeSync(fd)
    }
  }
  return out
}
