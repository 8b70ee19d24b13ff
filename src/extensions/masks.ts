import { mkdirSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { VisError } from '../util/errors.js'
import { within } from '../util/path-within.js'
import { realish } from '../util/real-path.js'

// Where the extension directories meet a sandbox's roots. Code written into an extension
// directory runs unconfined at the next reload, so a sandbox must never reach one: the jail
// masks each one inside a root, and roots that cannot be masked are refused.

// Extension directories (existing or not) a sandbox with these roots could reach.
export function exposedDirs(extensionDirs: string[], roots: string[]): string[] {
  const dirs = extensionDirs.map(realish)
  return dirs.filter((dir) => roots.map(realish).some((r) => within(dir, r) || within(r, dir)))
}

// The directories the jail must mask for a sandbox with these roots (WorkerPolicy.hidden):
// every extension directory inside a root, as the sandbox sees it (under the root's own path).
// With `create`, missing ones are made first, so the mask exists before a block could create
// the directory itself. Refused when a root lies inside an extension directory (it cannot be
// masked without hiding the root) or reaches one through a symlink the sandbox could replace.
export function jailMasks(
  extensionDirs: string[],
  roots: string[],
  sessionId: string | undefined,
  create: boolean,
): string[] {
  const hidden: string[] = []
  const refuse = (path: string, why: string) => {
    throw new VisError(
      'ext.dirs-exposed',
      `${why}; code the sandbox writes there would run unconfined as an extension. ` +
        'Give the session roots that do not lie inside the extension directories.',
      { sessionId, path },
    )
  }
  for (const lexDir of extensionDirs) {
    for (const lexRoot of roots.map((r) => resolve(r))) {
      const realRoot = realish(lexRoot)
      if (within(realRoot, realish(lexDir)) || within(lexRoot, lexDir)) {
        refuse(lexRoot, `root ${lexRoot} lies inside the extension directory ${lexDir}`)
      }
      const lexInside = within(lexDir, lexRoot)
      if (!lexInside && !within(realish(lexDir), realRoot)) continue
      if (create) mkdirSync(lexDir, { recursive: true })
      const realDir = realish(lexDir)
      if (!within(realDir, realRoot)) {
        refuse(lexDir, `extension directory ${lexDir} is reached through a symlink inside root ${lexRoot}`)
      }
      hidden.push(join(lexRoot, relative(realRoot, realDir)))
    }
  }
  return [...new Set(hidden)]
}
