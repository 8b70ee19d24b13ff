import { checkRootPaths } from '../confinement/root-guard.js'
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
): Record<string, string> {
  return checkRootPaths(policy.roots, { within: policy.within }, { sessionId, op: 'create-session' })
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

// The policy of a child session (the agent's sub_loop(roots=...)): its roots must lie within the
// parent's, which become its bounds, checked like every root at each of its jails (root-guard.ts);
// the parent's own bounds still apply. No roots given: the parent's. Masks and a draft's overlay
// belong to the parent's jail and are worked out again for the child's.
export function childPolicy(
  parent: WorkerPolicy,
  roots: readonly string[] | undefined,
  sessionId: string,
): WorkerPolicy {
  const { hidden: _h, overlay: _o, pins: _p, ...rest } = parent
  const child = normalizePolicy({ ...rest, roots: [...(roots ?? parent.roots)], within: parent.roots })
  if (parent.roots.length === 0 && child.roots.length > 0) {
    throw new VisError(
      'policy.root-not-allowed',
      `Root ${child.roots[0]} is not inside the parent session's roots (it has none); a child session sees ` +
        'at most what its parent sees.',
      { sessionId, path: child.roots[0] },
    )
  }
  if (parent.within) checkRoots({ roots: child.roots, within: parent.within }, sessionId)
  const pins = checkRoots(child, sessionId)
  return child.roots.length > 0 ? { ...child, pins } : child
}
