import { realpathSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

// The real path of p, or of its nearest existing parent joined with the rest: where a path that
// may not exist yet would be, once made (roots, masks and homes are compared this way).
export function realish(p: string): string {
  const abs = resolve(p)
  try {
    return realpathSync(abs)
  } catch {
    const parent = dirname(abs)
    return parent === abs ? abs : join(realish(parent), relative(parent, abs))
  }
}
