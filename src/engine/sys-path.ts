import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { discoverProjectLayout, isDirWithin, LAYOUT_METADATA } from '../project/index.js'
import { within } from '../util/path-within.js'

export type SysPathInput = {
  roots: string[]
  // The engine's project directory: its layout (and the configured source paths) come first.
  project?: string
  sourcePaths?: string[]
  python?: string
}

// The import roots the sandbox's sys.path starts with: what the project (and each root that is
// itself a project) declares, resolved, existing, really inside the session's roots (nothing
// else is readable there; a link out of a root is not followed), in order and each once; then each root itself, as python3 puts its script's
// directory there, so `from calc import add` finds the workspace's calc/ as it would in a shell.
export async function sandboxSysPath(input: SysPathInput): Promise<string[]> {
  const { roots } = input
  if (roots.length === 0) return []
  const project = input.project === undefined ? undefined : resolve(input.project)
  const dirs = [...new Set([...(project ? [project] : []), ...roots])].filter((d) =>
    roots.some((r) => within(d, r)),
  )
  const out: string[] = []
  for (const dir of dirs) {
    const sourcePaths = dir === project ? (input.sourcePaths ?? []) : []
    if (sourcePaths.length === 0 && !LAYOUT_METADATA.some((f) => existsSync(resolve(dir, f)))) continue
    const layout = await discoverProjectLayout(dir, { sourcePaths, python: input.python })
    for (const p of layout.importRoots) {
      if (roots.some((r) => within(p, r) && isDirWithin(p, r)) && !out.includes(p)) out.push(p)
    }
  }
  for (const r of roots) if (!out.includes(r)) out.push(r)
  return out
}
