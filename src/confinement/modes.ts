import { z } from 'zod'

// A session's mode (issue 32): how it may change its roots.
// - workspace: every root read-write (the default).
// - read-only: every root read-only, for blocks (the jail's mounts and Landlock, the audit
//   hook's readable refusal) and the host tools alike.
// - review: the primary root is a draft (src/drafts) the person applies or drops at the end;
//   the other roots are read-only, so every write lands only through the draft.
export const SESSION_MODES = ['workspace', 'read-only', 'review'] as const
export const SessionModeSchema = z.enum(SESSION_MODES)
export type SessionMode = z.infer<typeof SessionModeSchema>

type ModePolicy = { roots: string[]; mode?: SessionMode; overlay?: { root: string } }

// The roots a policy shows read-only. A review without its draft yet shows every root
// read-only: nothing may land outside a draft.
export function readOnlyRoots(p: ModePolicy): string[] {
  if (p.mode === 'read-only') return [...p.roots]
  if (p.mode === 'review') return p.roots.filter((r) => r !== p.overlay?.root)
  return []
}

// Why a write under a read-only root is refused: what the person can do about it.
export function readOnlyWhy(p: ModePolicy): string | undefined {
  if (p.mode === 'read-only')
    return 'the session is read-only (mode read-only): its roots can be read but not changed; to change files, start a session in mode workspace (without --read-only) or review'
  if (p.mode === 'review')
    return 'the session is in review (mode review): only the workspace root is writable, through its draft; other roots are read-only'
  return undefined
}
