import { loadConfineAddon } from '../confinement/native.js'
import { VisError } from '../util/errors.js'

// overlayfs keeps what a directory entry means for the merged view in extended attributes of
// the upper directory. The drafts mount with `userxattr` (a user namespace mounts them), so
// the names are `user.overlay.*`; a mount made by real root would use `trusted.overlay.*`,
// which is read too so an upper directory means the same whoever mounted it.
const PREFIXES = ['user.overlay.', 'trusted.overlay.']

function attr(path: string, name: string): Buffer | null {
  const addon = loadConfineAddon()
  if (!addon)
    throw new VisError(
      'confine.addon-missing',
      'vis_confine.node is not built: run `npm run build:addon` (the drafts read overlayfs markers with it)',
      { op: 'draft', path },
    )
  for (const prefix of PREFIXES) {
    const v = addon.getXattr(path, prefix + name)
    if (v) return v
  }
  return null
}

// An opaque directory hides everything of the lower layer at its path: the draft deleted the
// directory and made it again (`rm -r d; mkdir d`, `shutil.rmtree` then `os.makedirs`).
// 'y' only: 'x' marks a directory holding redirect whiteouts, not an opaque one.
export function isOpaqueDir(upperPath: string): boolean {
  return attr(upperPath, 'opaque')?.toString() === 'y'
}
