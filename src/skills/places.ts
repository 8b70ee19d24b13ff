import { join } from 'node:path'

// Where skills and agent definitions are looked for, in precedence order (first name wins):
// each root's .vis, .claude and .agents folders (roots in order), then the vis home, then the
// user's ~/.claude. Pure: paths only, nothing is read.

export type Place = {
  // Under a session root: read through the root with no symlink followed (the sandbox writes
  // there). Outside every root: the person's own folders, symlinks (dotfiles) allowed.
  root?: string
  // The folder searched, absolute.
  dir: string
}

export type PlaceInput = { roots: readonly string[]; visHome: string; userHome: string }

export function skillPlaces(p: PlaceInput): Place[] {
  return [
    ...p.roots.flatMap((root) =>
      ['.vis/skills', '.claude/skills', '.agents/skills'].map((rel) => ({ root, dir: join(root, rel) })),
    ),
    { dir: join(p.visHome, 'skills') },
    { dir: join(p.userHome, '.claude', 'skills') },
  ]
}

export function agentPlaces(p: PlaceInput): Place[] {
  return [
    ...p.roots.flatMap((root) =>
      ['.vis/agents', '.claude/agents'].map((rel) => ({ root, dir: join(root, rel) })),
    ),
    { dir: join(p.visHome, 'agents') },
    { dir: join(p.userHome, '.claude', 'agents') },
  ]
}

// First name wins: the kept items in discovery order, and each later one with the same name
// as shadowed by the path that won.
export function firstNameWins<T extends { name: string; path: string }>(
  found: readonly T[],
): { kept: T[]; shadowed: { name: string; path: string; by: string }[] } {
  const byName = new Map<string, T>()
  const shadowed: { name: string; path: string; by: string }[] = []
  for (const f of found) {
    const winner = byName.get(f.name)
    if (winner) shadowed.push({ name: f.name, path: f.path, by: winner.path })
    else byName.set(f.name, f)
  }
  return { kept: [...byName.values()], shadowed }
}

// A skill's or agent's name is shown to the model, named in calls and, for a skill outside the
// roots, a folder name in the session's mount: no separators, no dot-names.
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
