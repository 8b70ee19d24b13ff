import { statSync } from 'node:fs'
import { isVisError, VisError } from '../util/errors.js'

// Roots the jail cannot mount, refused with the reason before a worker is tried: a worker that
// dies on them would only say so in its log, whose path is nobody's business over HTTP.
export function checkRoots(roots: readonly string[], sessionId: string): void {
  for (const root of roots) {
    if (root === '/') {
      throw new VisError(
        'policy.root-too-broad',
        '"/" cannot be a root: the jail lays its own /tmp, /proc, /dev and system libraries over the roots, ' +
          'so the whole filesystem cannot be mounted into it. Name the directories the session needs.',
        { sessionId, path: root },
      )
    }
    let isDir: boolean
    try {
      isDir = statSync(root).isDirectory()
    } catch {
      // Missing paths get the confinement layer's own error (confine.path-missing).
      continue
    }
    if (!isDir) {
      throw new VisError(
        'policy.root-not-directory',
        `Root ${root} is not a directory; roots are directories.`,
        {
          sessionId,
          path: root,
        },
      )
    }
  }
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
