import { existsSync } from 'node:fs'
import { resolve, sep } from 'node:path'
import { discoverProjectLayout } from '../project/index.js'

// The files a project declares its import roots in (src/project reads them with Python's own
// parsers). A directory with none of them gets nothing inferred, and no parser is started.
const METADATA = ['pyproject.toml', 'setup.cfg', 'pytest.ini', 'tox.ini']

const within = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith(sep) ? dir : dir + sep)

export type SysPathInput = {
  roots: string[]
  // The engine's project directory: its layout (and the configured source paths) come first.
  project?: string
  sourcePaths?: string[]
  python?: string
}

// The import roots the sandbox's sys.path starts with: what the project (and each root that is
// itself a project) declares, resolved, existing, inside the session's roots (nothing else is
// readable there), in order and each once.
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
    if (sourcePaths.length === 0 && !METADATA.some((f) => existsSync(resolve(dir, f)))) continue
    const layout = await discoverProjectLayout(dir, { sourcePaths, python: input.python })
    for (const p of layout.importRoots) {
      if (roots.some((r) => within(p, r)) && !out.includes(p)) out.push(p)
    }
  }
  return out
}
