import { checkRootPaths } from '../confinement/root-guard.js'
import { isVisError, VisError } from '../util/errors.js'
import type { WorkerPolicy } from '../worker/policy.js'

// Roots the jail cannot or must not mount, refused with the reason before a worker is tried: a
// worker that dies on them would only say so in its log, whose path is nobody's business over
// HTTP. The jail checks again, on what each path names when it is built (root-guard.ts).
export function checkRoots(policy: Pick<WorkerPolicy, 'roots' | 'within'>, sessionId: string): void {
  checkRootPaths(policy.roots, { within: policy.within }, { sessionId, op: 'create-session' })
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
