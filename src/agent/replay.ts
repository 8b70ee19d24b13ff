import { z } from 'zod'
import type { Engine } from '../engine/engine.js'
import type { Message, ToolCall } from './providers/types.js'
import type { AgentRecords } from './records.js'
import { renderBlock } from './render.js'
import { callCode, capNotice, engineAttachments, NOT_RUN, resultMessage, userText } from './transcript.js'

// A session's earlier turns rebuilt from their rows after a restart, message for message as the
// live loop appended them: each prompt, each reply with its tool calls and reasoning, what each
// block did (rendered again from the stored block), the cap notice. So the first turn after a
// restart sends what an unbroken process would have sent:
// - continuity: Anthropic refuses tool results whose thinking is missing only within a turn, and
//   drops earlier turns' thinking itself, but documents passing all of it back as the way to keep
//   the model's reasoning (newer models keep it, bound to the transcript that produced it);
//   OpenAI's reasoning-item reference says to include the items in later turns' input when the
//   context is managed by hand (the model ignores those it no longer needs);
// - the prompt cache: an unchanged prefix keeps matching across the restart.
// Each dialect sends back only its own reasoning kinds (providers/*.ts).

// What the host stored as the turn's request (host.ts); rows from before these keys existed
// replay with the defaults given below.
const RequestSchema = z
  .object({
    prompt: z.string(),
    expanded: z.string().optional().describe('The prompt after its template, when one was used.'),
    max_iterations: z.number().int().optional(),
    tool_calling: z.boolean().optional(),
  })
  .passthrough()
export type TurnRequest = z.infer<typeof RequestSchema>

export function replayHistory(
  engine: Engine,
  records: AgentRecords,
  sessionId: string,
  current: string,
  opts: { images: boolean; maxIterations: number },
): Message[] {
  const out: Message[] = []
  const bytes = engineAttachments(engine, sessionId)
  for (const id of records.turnIds(sessionId)) {
    if (id === current) continue
    const rows = records.replayRows(id)
    const request = RequestSchema.safeParse(rows.request)
    // A turn opened through the block API has no prompt: the model never saw it.
    if (!request.success) continue
    const r = request.data
    const view = records.turn(id)!
    const max = r.max_iterations ?? opts.maxIterations
    out.push(userText(r.expanded ?? r.prompt))
    for (const it of view.iterations) {
      // Older rows: a fenced-block turn's calls are named after their iteration (loop.ts).
      const toolCalling = r.tool_calling ?? !it.tool_calls.some((c) => c.id === `block_${it.position}`)
      if (it.position > max) out.push(userText(capNotice(max)))
      const calls = it.tool_calls as ToolCall[]
      const text = it.text ?? ''
      const reasoning = rows.reasoning.get(it.id)
      // An empty reply was not appended (the loop asked again).
      if (calls.length === 0 && text.trim() === '') continue
      out.push({
        role: 'assistant',
        text,
        toolCalls: toolCalling ? calls : [],
        ...(reasoning ? { reasoning, reasoningModel: it.model ?? '' } : {}),
      })
      // The iteration's blocks, in order, belong to its usable calls in order; a usable call
      // without a block was not run (the turn was cancelled or the host stopped first).
      const blocks = [...it.block_ids]
      for (const call of calls) {
        const usable = callCode(call, it.stop)
        const blockId = 'refused' in usable ? undefined : blocks.shift()
        const content =
          'refused' in usable
            ? usable.refused
            : blockId
              ? renderBlock(engine.getBlock(blockId), bytes, opts.images)
              : NOT_RUN
        out.push(resultMessage(toolCalling, call, content))
      }
    }
  }
  return out
}
