import { checkRootPaths, identityBeneath, lexicalRefusal, openRoots } from '../confinement/root-guard.js'
import { normalizePolicy, type WorkerPolicy } from '../sessions/session-policy.js'
import { isVisError, VisError } from '../util/errors.js'

// Roots the jail cannot or must not mount, refused with the reason before a worker is tried: a
// worker that dies on them would only say so in its log, whose path is nobody's business over
// HTTP. The jail checks again, on what each path names when it is built (root-guard.ts).
// Returns the roots' identities: the session keeps them as its pins, so a root's path later
// leading to another directory (swapped by another sandbox over its parent) is refused.
export function checkRoots(
  policy: Pick<WorkerPolicy, 'roots' | 'within'>,
  sessionId: string,
  pins?: Readonly<Record<string, string>>,
): Record<string, string> {
  return checkRootPaths(
    policy.roots,
    { within: policy.within, ...(pins ? { pins } : {}) },
    { sessionId, op: 'create-session' },
  )
}

// A worker that failed to start under a policy: the jail's own words, without the log's path or pid.
export function jailRefusal(err: unknown, roots: readonly string[], sessionId: string): unknown {
  if (!isVisError(err, 'worker.died')) return err
  const tail = (err.context as { logTail?: unknown } | undefined)?.logTail
  const reason =
    typeof tail === 'string' && tail.trim() !== '' ? tail.trim().split('\n').at(-1) : 'its worker exited'
  return new VisError(
    'session.jail-refused',
    `The jail could not be built for this session's roots (${roots.join(', ') || 'none'}): ${reason}`,
    { sessionId, roots: [...roots] },
  )
}

// The policy of a child session (the agent's sub_loop(roots=...)): it sees at most the
// directories its parent was pinned to, never whatever the parent's root paths lead to now. The parent's roots are opened
// and held to the parent's pins first (a root renamed away or swapped for a link refuses the
// child with policy.root-changed, as it refuses the parent's own tools); each child root is then
// pinned to what it names beneath the parent root's fd (openat2, no symlinks, nothing above),
// and the child's every jail holds it to that identity. No roots given: the parent's, with the
// parent's pins. The parent's roots become the child's bounds; the parent's own bounds still
// apply. Masks and a draft's overlay belong to the parent's jail and are worked out again.
export function childPolicy(
  parent: WorkerPolicy,
  roots: readonly string[] | undefined,
  sessionId: string,
): WorkerPolicy {
  const ctx = { sessionId, op: 'sub_loop' }
  const { hidden: _h, overlay: _o, pins: parentPins, ...rest } = parent
  const child = normalizePolicy({ ...rest, roots: [...(roots ?? parent.roots)], within: parent.roots })
  if (child.roots.length === 0) return child
  if (parent.roots.length === 0) {
    throw new VisError(
      'policy.root-not-allowed',
      `Root ${child.roots[0]} is not inside the parent session's roots (it has none); a child session sees ` +
        'at most what its parent sees.',
      { ...ctx, path: child.roots[0] },
    )
  }
  const opened = openRoots(
    parent.roots,
    { ...(parent.within ? { within: parent.within } : {}), ...(parentPins ? { pins: parentPins } : {}) },
    ctx,
  )
  try {
    const pins: Record<string, string> = {}
    for (const root of child.roots) {
      const lexical = lexicalRefusal(root, root, ctx)
      if (lexical) throw lexical
      // The innermost parent root holding it (roots may nest).
      const base = opened.roots
        .filter((r) => root === r.path || root.startsWith(`${r.path}/`))
        .sort((a, b) => b.path.length - a.path.length)[0]
      if (!base) {
        throw new VisError(
          'policy.root-not-allowed',
          `Root ${root} is not inside the parent session's roots (${parent.roots.join(', ')}); a child ` +
            'session sees at most what its parent sees. Name a directory inside them.',
          { ...ctx, path: root },
        )
      }
      pins[root] = identityBeneath(base, root, ctx)
    }
    // Every other rule (vis home, runtime trees, pseudo filesystems), on what each path names
    // now, which must be the directory just pinned.
    checkRootPaths(child.roots, { within: child.within, pins }, ctx)
    return { ...child, pins }
  } finally {
    opened.close()
  }
}
