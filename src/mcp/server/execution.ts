import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Engine } from '../../engine/engine.js'
import type { EventView } from '../../engine/schemas.js'
import type { McpServePolicy } from '../config.js'
import { blockResult } from './render.js'
import type { ClientSessions } from './sessions.js'
import type { ToolCallExtra } from './tools.js'

export type BlockRequest = { code: string; label?: string; timeoutMs?: number }

// One progress notification carries at most this much output; the whole output is in the result.
const MAX_PROGRESS_CHARS = 16 * 1024

type OutputData = { block_id?: string; stream?: string; data?: string }

// Runs one block for an MCP client: output goes out as progress notifications while it runs
// (when the client asked for progress), a cancelled request interrupts it (once it has started:
// a block still queued behind another is interrupted the moment it starts), and the finished
// block comes back as MCP content.
export async function runBlockForClient(
  engine: Engine,
  sessions: ClientSessions,
  req: BlockRequest,
  policy: McpServePolicy,
  extra: ToolCallExtra,
): Promise<CallToolResult> {
  const { id: sessionId, replaced } = await sessions.ensure(req.label, policy)
  let blockId: string | undefined
  let started = false
  let interrupted = false
  let progress = 0
  const interrupt = () => {
    if (interrupted || !started) return
    interrupted = true
    engine.interrupt(sessionId).catch(() => undefined)
  }
  // Events that arrive before submitBlock has named the block are held, then looked at again.
  const early: EventView[] = []
  const onEvent = (ev: EventView) => {
    const data = (ev.data ?? {}) as OutputData
    if (blockId === undefined) {
      early.push(ev)
      return
    }
    if (data.block_id !== blockId) return
    if (ev.type === 'block-started') {
      started = true
      if (extra.signal.aborted) interrupt()
    } else if (ev.type === 'output' && extra.progressToken !== undefined && typeof data.data === 'string') {
      progress += 1
      extra.sendProgress(progress, data.data.slice(0, MAX_PROGRESS_CHARS)).catch(() => undefined)
    }
  }
  // Subscribed before submitting, so the block's first event cannot be missed.
  const off = engine.subscribe(sessionId, onEvent)
  const onAbort = () => interrupt()
  extra.signal.addEventListener('abort', onAbort, { once: true })
  try {
    const submitted = await engine.submitBlock(sessionId, {
      code: req.code,
      ...(req.timeoutMs !== undefined ? { timeout_ms: req.timeoutMs } : {}),
    })
    blockId = submitted.id
    for (const ev of early.splice(0)) onEvent(ev)
    const block = await submitted.done
    const result = blockResult(engine, block)
    if (replaced) result.content.unshift({ type: 'text', text: restartNote(replaced.roots, policy.roots) })
    return result
  } finally {
    extra.signal.removeEventListener('abort', onAbort)
    off()
  }
}

// Said before the block's output when its session had to start afresh: the model must know its
// earlier globals are gone, and why.
function restartNote(before: string[], now: string[]): string {
  const list = (r: string[]) => (r.length > 0 ? r.join(', ') : 'none')
  return (
    `(your roots changed from ${list(before)} to ${list(now)}: this session started afresh with them; ` +
    'globals of earlier blocks are gone)'
  )
}
