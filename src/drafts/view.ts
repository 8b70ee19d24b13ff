import { realpathSync } from 'node:fs'
import { sep } from 'node:path'

// The host file tools (cat, ls, grep, patch, write...) run in the host process, not in a
// jail, so they cannot enter the draft's mount namespace. They open paths through its
// holder instead: /proc/<holder>/root/<root> is the one overlay mount the worker and the
// tool jails bind (confinement/draft-mount.ts), so all of them always agree.
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

// Where a host tool opens `abs` (already checked against the session's roots).
export function draftPath(sessionId: string, abs: string): string {
  const v = views.get(sessionId)
  if (!v) return abs
  const root = v.roots.find((r) => within(abs, r))
  if (root === undefined) return abs
  // The jail binds the root at its path as given (roots[0]), whatever it resolves to.
  return `/proc/${v.holder}/root${v.roots[0]}${abs.slice(root.length)}`
}
