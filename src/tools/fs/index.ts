import { indexTool } from '../outline/index-tool.js'
import type { Tool } from '../types.js'
import { catTool } from './cat.js'
import { type GrepEngineChoice, grepTool } from './grep.js'
import { lsTool } from './ls.js'
import { mutateTools } from './mutate.js'
import { patchTool } from './patch.js'
import type { PathGuard } from './paths.js'

export function fileTools(guard: PathGuard, opts: { grepEngine?: GrepEngineChoice } = {}): Tool[] {
  return [
    catTool(guard),
    lsTool(guard),
    grepTool(guard, opts.grepEngine),
    indexTool(guard),
    patchTool(guard),
    ...mutateTools(guard),
  ]
}
