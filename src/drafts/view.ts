import { realpathSync } from 'node:fs'
import { sep } from 'node:path'
import { VisError } from '../util/errors.js'

// The host file tools (cat, ls, grep, patch, write...) run in the host process, not in a
// jail, so they cannot mount the draft's overlay themselves. They open paths through the
// session worker's own mount of it instead: /proc/<helper>/root/<root> is that process's
// view, the very overlay its Python code reads and writes, so both always agree (no second
// overlay to go stale). Reaching it needs ptrace-read access to the helper, which the host
// user has: it owns the sandbox's user namespace.
type View = { roots: string[]; helper: () => number | undefined }

const views = new Map<string, View>()

export function setDraftView(sessionId: string, root: string, helper: () => number | undefined): void {
  let real = root
  try {
    real = realpathSync(root)
  } catch {}
  views.set(sessionId, { roots: [...new Set([root, real])], helper })
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
  const pid = v.helper()
  if (pid === undefined) {
    throw new VisError(
      'draft.no-worker',
      `session ${sessionId} is in a draft but has no live worker to show it; run a block to start one`,
      { sessionId, op: 'open', path: abs },
    )
  }
  // The jail binds the root at its path as given (roots[0]), whatever it resolves to.
  return `/proc/${pid}/root${v.roots[0]}${abs.slice(root.length)}`
}
