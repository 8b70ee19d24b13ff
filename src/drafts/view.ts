import { realpathSync } from 'node:fs'
import { sep } from 'node:path'

// The host file tools (cat, ls, grep, patch, write...) run in the host process, not in a
// jail, so they cannot enter the draft's mount namespace. They open paths through its
// holder instead: /proc/<holder>/root/<root> is the one overlay mount the worker and the
// tool jails bind (confinement/draft-mount.ts), so all of them always agree.
//
// A path is never opened as the string `/proc/<holder>/root/...`: walking it, an absolute
// symlink inside the draft (`link -> <root>`, or `-> /etc`) would resolve against the HOST's
// root, so a tool would read or write the real root behind the draft. The tools open the
// path inside the holder's root with openat2's RESOLVE_IN_ROOT (tools/fs/paths.ts), which
// resolves every link as the draft itself sees it.
type View = { roots: string[]; holder: number }

const views = new Map<string, View>()

export function setDraftView(sessionId: string, root: string, holder: number): void {
  let real = root
  try {
    real = realpathSync(root)
  } catch {}
  views.set(sessionId, { roots: [...new Set([root, real])], holder })
}

export function clearDraftView(sessionId: string): void {
  views.delete(sessionId)
}

const within = (p: string, r: string) => p === r || p.startsWith(r + sep)

// Where a host tool opens `abs` (already checked against the session's roots): `path` inside
// the filesystem root `root` (the holder's); undefined when abs is not in the draft.
export function draftPath(sessionId: string, abs: string): { root: string; path: string } | undefined {
  const v = views.get(sessionId)
  if (!v) return undefined
  const root = v.roots.find((r) => within(abs, r))
  if (root === undefined) return undefined
  // The jail binds the root at its path as given (roots[0]), whatever it resolves to.
  return { root: `/proc/${v.holder}/root`, path: `${v.roots[0]}${abs.slice(root.length)}` }
}
