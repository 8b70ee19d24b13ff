// mtimes over a tree, for postinstall's and prepack's "is dist/ older than src/" checks.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

// The newest mtime (ms) of the files under dir whose names end with ext; 0 when none.
export function newest(dir, ext) {
  let best = 0
  if (!existsSync(dir)) return best
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name)
    if (entry.isDirectory()) best = Math.max(best, newest(p, ext))
    else if (entry.name.endsWith(ext)) best = Math.max(best, statSync(p).mtimeMs)
  }
  return best
}
