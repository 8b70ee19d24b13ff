import { badArgs, bindNames, splitArgs } from '../tools/args.js'
import type { Tool } from '../tools/types.js'
import { VisError } from '../util/errors.js'

export const FOLD_TOOL = 'fold_session'
const SIGNATURE = '(note)'
// A note is what the model keeps verbatim through the fold: a page, not a transcript.
export const MAX_FOLD_NOTE = 8_000

// fold_session(note) from a block: after this block, the turn's older iterations are replaced by
// a summary (src/agent/compaction.ts) that keeps `note` word for word. The loop does the folding
// once the block has ended (its result must be in the conversation first); the tool only asks.
// `request` returns false when no agent turn is running in the session.
export function foldTool(sessionId: string, request: (note: string) => boolean): Tool {
  return {
    name: FOLD_TOOL,
    signature: SIGNATURE,
    doc: [
      "Compact this turn's conversation now, keeping `note`: after this block the older iterations are",
      'replaced by a summary, your note (what to remember: findings, plan, names), and the live state',
      '(your functions, classes, variables with types, files changed). The last iterations stay verbatim.',
      'Use it after a long exploration whose details you no longer need. It happens by itself when the',
      "conversation nears the model's context window.",
    ].join('\n'),
    async run(args) {
      const { positional, kwargs } = splitArgs(args)
      const { note } = bindNames(FOLD_TOOL, SIGNATURE, ['note'], positional, kwargs)
      if (typeof note !== 'string') throw badArgs(FOLD_TOOL, SIGNATURE, 'note must be a string')
      if (note.length > MAX_FOLD_NOTE)
        throw badArgs(
          FOLD_TOOL,
          SIGNATURE,
          `the note has ${note.length} characters, over ${MAX_FOLD_NOTE}: keep what you must remember, not a transcript`,
        )
      if (!request(note)) {
        throw new VisError(
          'agent.fold-outside-turn',
          'fold_session() compacts the conversation of an agent turn; this block does not belong to a running turn, so there is nothing to fold.',
          { sessionId, op: FOLD_TOOL },
        )
      }
      return 'The conversation will be folded when this block ends: older iterations become a summary that keeps your note.'
    },
  }
}
