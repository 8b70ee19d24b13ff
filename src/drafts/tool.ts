import type { Tool } from '../tools/types.js'
import type { Drafts } from './drafts.js'

// draft_diff(): the model's view of what its draft changed, as the person reviewing it
// will see it.
export function draftDiffTool(drafts: Drafts, sessionId: string): Tool {
  return {
    name: 'draft_diff',
    doc: "The unified diff of this session's draft against the real workspace (files added, changed, deleted, renamed; binary files named). On the trunk: a note that there is no draft.",
    signature: '()',
    async run() {
      const d = await drafts.diff(sessionId)
      if (d.draft === null) return 'no draft: this session works directly in its workspace (the trunk)'
      return d.diff === '' ? 'the draft has no changes yet' : d.diff
    },
  }
}
