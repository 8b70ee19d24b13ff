import { realpath, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { readOnlyRoots, readOnlyWhy, type SessionMode } from '../confinement/modes.js'
import { draftPath } from '../drafts/view.js'
import type { GrepEngineChoice } from './fs/grep.js'
import { fileTools } from './fs/index.js'
import { PathGuard } from './fs/paths.js'
import { gitTool } from './git/git.js'
import { shellTool } from './shell/shell.js'
import type { Tool } from './types.js'

export { fileTools } from './fs/index.js'
export { PathGuard } from './fs/paths.js'
export { gitTool } from './git/git.js'
export { SessionResources } from './resources.js'
export { shellTool } from './shell/shell.js'
export type { Json, Resource, ResourceRegistry, SpawnHook, Tool, ToolContext } from './types.js'

export interface ToolSetOptions {
  sessionId?: string
  // Absolute directories the tools may touch; the first is the workspace.
  roots: string[]
  // The session's shell toggle (off by default).
  shell?: boolean
  // Directories inside the roots the tools refuse (the extension directories its jail masks).
  hidden?: string[]
  // Each root's identity when the session was created (root-guard.ts pinRoots).
  pins?: Readonly<Record<string, string>>
  grepEngine?: GrepEngineChoice
  // The session's mode (src/confinement/modes.ts): its read-only roots refuse every change.
  mode?: SessionMode
  // A review's draft root (the one root it writes).
  overlayRoot?: string
}

// Whether a directory is inside a git work tree: a `.git` (directory or
// file, for worktrees and submodules) here or in a parent. Found without
// running git, so a repository's config cannot run anything. Every level is
// asked at once: a session's setup waits for this, and one thread-pool trip
// beats one per level.
export async function insideGitRepo(dir: string): Promise<boolean> {
  const levels: string[] = []
  for (let d = dir; ; d = dirname(d)) {
    levels.push(join(d, '.git'))
    if (dirname(d) === d) break
  }
  const found = await Promise.all(
    levels.map((p) =>
      stat(p).then(
        () => true,
        () => false,
      ),
    ),
  )
  return found.includes(true)
}

// The tools a session gets by default: the file tools always, git when the
// workspace is in a repository, shell when the session's toggle is on.
export async function defaultTools(opts: ToolSetOptions): Promise<Tool[]> {
  const guard = new PathGuard(
    opts.roots,
    opts.sessionId,
    opts.hidden,
    (abs) => draftPath(opts.sessionId ?? '', abs),
    opts.pins,
  )
  const frozen = readOnlyRoots({
    roots: opts.roots,
    mode: opts.mode,
    overlay: opts.overlayRoot ? { root: opts.overlayRoot } : undefined,
  })
  const why = readOnlyWhy({ roots: opts.roots, mode: opts.mode })
  if (frozen.length > 0 && why) guard.readOnlyRoots = { roots: frozen, why }
  const tools = fileTools(guard, { grepEngine: opts.grepEngine })
  // Where the workspace really is, for the git check only: a pinned root already swapped refuses
  // every tool call itself (policy.root-changed), and binding the tools must not fail on it (the
  // worker's jail holds the directory it checked). So one realpath, one thread-pool trip.
  const workspace = await realpath(guard.workspace).catch(() => guard.workspace)
  if (await insideGitRepo(workspace)) tools.push(gitTool(guard))
  if (opts.shell) tools.push(shellTool(guard))
  return tools
}
