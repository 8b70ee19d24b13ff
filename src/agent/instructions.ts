import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { errorMessage } from '../util/errors.js'

export type Instruction = { path: string; text: string }
export type InstructionWarning = { path: string; reason: string }

// Each directory's instruction file: AGENTS.md, or CLAUDE.md where there is no AGENTS.md.
function fileIn(dir: string): string | undefined {
  for (const name of ['AGENTS.md', 'CLAUDE.md']) {
    const p = join(dir, name)
    if (existsSync(p)) return p
  }
  return undefined
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
// (outermost first), then each root; nearer files come later so they win. Read whole: nothing
// is truncated. A file that cannot be read is a warning, never prompt text.
export function projectInstructions(
  home: string,
  roots: readonly string[],
): {
  files: Instruction[]
  warnings: InstructionWarning[]
} {
  const dirs = [home, ...(roots[0] ? ancestors(resolve(roots[0])) : []), ...roots.map((r) => resolve(r))]
  const seen = new Set<string>()
  const files: Instruction[] = []
  const warnings: InstructionWarning[] = []
  for (const dir of dirs) {
    const path = fileIn(dir)
    if (!path || seen.has(path)) continue
    seen.add(path)
    try {
      files.push({ path, text: readFileSync(path, 'utf8') })
    } catch (err) {
      warnings.push({ path, reason: errorMessage(err) })
    }
  }
  return { files, warnings }
}
