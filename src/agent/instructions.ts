import { dirname, join, relative, resolve } from 'node:path'
import { errorMessage } from '../util/errors.js'
import { readFirstPromptFile } from './read-text.js'

// Each directory's file: AGENTS.md, or CLAUDE.md where there is no AGENTS.md.
const NAMES = ['AGENTS.md', 'CLAUDE.md'] as const

export type Instruction = { path: string; text: string }
export type InstructionWarning = { path: string; reason: string }

const inside = (dir: string, root: string) => {
  const rel = relative(root, dir)
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith('/'))
}

// Outermost first, ending with the workspace's parent.
function ancestors(dir: string): string[] {
  const out: string[] = []
  for (let d = dirname(dir); ; d = dirname(d)) {
    out.unshift(d)
    if (dirname(d) === d) break
  }
  return out
}

// Project instructions in prompt order: the vis home's, then every ancestor of the workspace
// (outermost first), then each root; nearer files come later so they win. Each directory's file
// is AGENTS.md, or CLAUDE.md where there is no AGENTS.md. Outside the vis home a link or FIFO is
// skipped with a warning, never followed or waited on (read-text.ts); a file over the cap is a
// warning too, never truncated prompt text.
export async function projectInstructions(
  home: string,
  roots: readonly string[],
): Promise<{
  files: Instruction[]
  warnings: InstructionWarning[]
}> {
  const resolvedRoots = roots.map((r) => resolve(r))
  const resolvedHome = resolve(home)
  const dirs = [
    resolvedHome,
    ...(roots[0] ? ancestors(resolve(roots[0])) : []),
    ...roots.map((r) => resolve(r)),
  ]
  const seen = new Set<string>()
  const files: Instruction[] = []
  const warnings: InstructionWarning[] = []
  for (const dir of dirs) {
    if (seen.has(dir)) continue
    seen.add(dir)
    // Only the vis home (which no sandbox can write) may hold a person's own link. Every other
    // directory may be a sandbox's to write: a root, or an ancestor that is another session's
    // root (`vis serve` on ~/projects, `vis run` in ~/projects/app), which could plant a link to
    // any host file (a key, /proc/self/environ) as that ancestor's AGENTS.md.
    const strict = dir !== resolvedHome || resolvedRoots.some((r) => inside(dir, r))
    try {
      const { name, file } = await readFirstPromptFile(dir, NAMES, strict)
      if (file.kind === 'text') files.push({ path: join(dir, name), text: file.text })
      else if (file.kind === 'skipped') warnings.push({ path: join(dir, name), reason: file.reason })
    } catch (err) {
      warnings.push({ path: join(dir, NAMES[0]), reason: errorMessage(err) })
    }
  }
  return { files, warnings }
}
