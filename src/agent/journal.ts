import { createHash } from 'node:crypto'
import type { ToolGate } from '../sessions/tool-table.js'
import { errorMessage } from '../util/errors.js'
import type { Approvals } from './approvals.js'
import type { AgentRecords } from './records.js'

// Where a session's tool calls belong right now: the turn and block the loop is running.
export type CallScope = { turnId: string | null; blockId: string | null }

const size = (v: unknown): number => {
  try {
    return Buffer.byteLength(JSON.stringify(v ?? null))
  } catch {
    return -1
  }
}

// The gate every tool call of a session passes: approval when required, then the call, then
// one journal row (tool, argument digest, duration, result size, approval and who gave it).
export function journalGate(
  sessionId: string,
  scope: CallScope,
  records: AgentRecords,
  approvals: Approvals,
): ToolGate {
  return async ({ tool, args, signal, holdDeadline }, run) => {
    const argsJson = JSON.stringify(args ?? [])
    const digest = createHash('sha256').update(argsJson).digest('hex')
    const { turnId, blockId } = scope
    const t0 = performance.now()
    const entry = (
      ok: boolean,
      error: string | null,
      resultBytes: number | null,
      approvalId: string | null,
    ) =>
      records.addToolCall({
        sessionId,
        turnId,
        blockId,
        tool: tool.name,
        argsSha256: digest,
        argsBytes: Buffer.byteLength(argsJson),
        ok,
        error,
        durationMs: Math.round((performance.now() - t0) * 1000) / 1000,
        resultBytes,
        approvalId,
      })
    let approvalId: string | null = null
    const reason = approvals.reason(tool, argsJson)
    if (reason) {
      // The wait for a person is bounded by approvals.timeoutMs, not by the block's timeout
      // (120 s by default, shorter than the approval's 600 s): the block's clocks stop meanwhile,
      // for at most one approval's timeout in all per block (a guest asking again and again while
      // a thread computes gets no more).
      const release = holdDeadline(approvals.timeoutMs)
      try {
        approvalId = (
          await approvals.request({
            sessionId,
            turnId,
            blockId,
            tool: tool.name,
            args,
            reason,
            signal,
            person: tool.approvalBy === 'person',
          })
        ).id
      } catch (err) {
        const id = (err as { context?: { approvalId?: string } }).context?.approvalId ?? null
        entry(false, errorMessage(err), null, id)
        throw err
      } finally {
        release()
      }
    }
    try {
      const value = await run()
      entry(true, null, size(value), approvalId)
      return value
    } catch (err) {
      entry(false, errorMessage(err), null, approvalId)
      throw err
    }
  }
}
