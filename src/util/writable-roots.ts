import { notedSessionRoots } from './host-programs.js'
import { liveJails } from './live-jails.js'

// Every root a sandbox may write now: the roots this process's sessions opened and every live
// jail's, of any vis process of this user. Read at each use: roots open after start-up.
export function writableRoots(): string[] {
  const roots = new Set(notedSessionRoots())
  for (const j of liveJails()) for (const r of j.roots) roots.add(r)
  return [...roots]
}
