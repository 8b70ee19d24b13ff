import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { discover, type Found } from './discover.js'

// What a session's worker was started with: the skills (and agent definitions) found for its
// roots then. The jail's mounts, the `skill` tool and the system prompt all read this one
// discovery, so the prompt never lists a skill the session cannot open.
const bySession = new WeakMap<object, Found>()

export async function discoverFor(roots: readonly string[], visHome: string): Promise<Found> {
  return discover({ roots, visHome, userHome: homedir() })
}

export function rememberSkills(session: object, found: Found): void {
  bySession.set(session, found)
}

export function skillsOf(session: object): Found | undefined {
  return bySession.get(session)
}

// The read-only mounts for the skills outside every root (their folders still there), each with
// its pin: every jail checks the folder is still the one found (confinement/mount-pins.ts).
export function skillMounts(found: Found): { source: string; target: string; pin?: string }[] {
  return found.skills.flatMap((s) =>
    s.mountSource && existsSync(s.mountSource)
      ? [{ source: s.mountSource, target: s.sessionDir, ...(s.mountPin ? { pin: s.mountPin } : {}) }]
      : [],
  )
}
