import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Engine } from '../../engine/engine.js'
import type { McpServePolicy } from '../../engine/mcp-config.js'
import type { EventView } from '../../engine/schemas.js'
import { VisError } from '../../util/errors.js'
import { blockResult, errorResult } from './render.js'
import type { ClientSessions } from './sessions.js'
import type { ToolCallExtra } from './tools.js'

export type BlockRequest = { code: string; label?: string; timeoutMs?: number }

// One progress notification carries at most this much output; the whole output is in the result.
const MAX_PROGRESS_CHARS = 16 * 1024

type OutputData = { block_id?: string; stream?: string; data?: string }

// Runs one block for an MCP client: output goes out as progress notifications while it runs
// (when the client asked for progress), a cancelled request stops its block (cancelled in the
// queue if it has not started, so its code never runs; interrupted if it runs), and the
// finished block comes back as MCP content.
// A session whose worker is gone (the interpreter exited, or an interrupt could not land) takes
// no more blocks: an MCP client cannot make a new session but by session_reset, so the block
// goes to a fresh one at once, and the result says so.
export async function runBlockForClient(
  engine: Engine,
  sessions: ClientSessions,
  req: BlockRequest,
  policy: McpServePolicy,
  extra: ToolCallExtra,
): Promise<CallToolResult> {
  const done = sessions.busy(req.label)
  try {
    const { id, replaced, evicted } = await sessions.ensure(req.label, policy)
    const note = replaced
      ? restartNote(replaced.roots, policy.roots)
      : evicted
        ? evictedNote(sessions.maxLive)
        : undefined
    try {
      return await runIn(engine, id, req, extra, note)
    } catch (err) {
      if (!(err instanceof VisError && err.code === 'worker.retired')) throw err
      await sessions.reset(req.label, id)
      const fresh = await sessions.ensure(req.label, policy)
      const why = err.message.replace(/; close it and create a new session\.?$/, '')
      const dead = `(${why}. This block ran in a fresh session: globals of earlier blocks are gone)`
      return await runIn(engine, fresh.id, req, extra, dead)
    }
  } finally {
    done()
  }
}

const evictedNote = (max: number) =>
  `(This session was closed while unused, to keep at most ${max} live sessions for this client. This block ` +
  'ran in a fresh session: globals of earlier blocks are gone; the old transcript is still a resource)'

async function runIn(
  engine: Engine,
  sessionId: string,
  req: BlockRequest,
  extra: ToolCallExtra,
  note: string | undefined,
): Promise<CallToolResult> {
  let blockId: string | undefined
  let progress = 0
  // Whether the cancellation reached the block (cancelled in the queue, or the interrupt landed).
  let stopped = false
  let stopping = Promise.resolve()
  // Named by its id, so a block of another request running now is never the one interrupted.
  // Tried again when the block starts: between queue and start, neither may take.
  const stop = () => {
    stopping = stopping.then(async () => {
      if (stopped || blockId === undefined || !extra.signal.aborted) return
      const r = await engine.interrupt(sessionId, { blockId }).catch(() => undefined)
      if (r && (r.landed || r.cancelled)) stopped = true
    })
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
    if (ev.type === 'block.started') stop()
    else if (ev.type === 'output' && extra.progressToken !== undefined && typeof data.data === 'string') {
      progress += 1
      extra.sendProgress(progress, data.data.slice(0, MAX_PROGRESS_CHARS)).catch(() => undefined)
    }
  }
  // Cancelled while its session was being made: the code is never handed over (nobody reads
  // this answer; the client has given up on the request).
  if (extra.signal.aborted) return errorResult('Cancelled before it started; it never ran.')
  // Subscribed before submitting, so the block's first event cannot be missed.
  const off = engine.subscribe(sessionId, onEvent)
  extra.signal.addEventListener('abort', stop, { once: true })
  try {
    const submitted = await engine.submitBlock(sessionId, {
      code: req.code,
      ...(req.timeoutMs !== undefined ? { timeout_ms: req.timeoutMs } : {}),
    })
    blockId = submitted.id
    for (const ev of early.splice(0)) onEvent(ev)
    stop()
    const block = await submitted.done
    const result = blockResult(engine, block)
    if (note) result.content.unshift({ type: 'text', text: note })
    return result
  } finally {
    extra.signal.removeEventListener('abort', stop)
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
