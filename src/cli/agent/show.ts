import { AgentRecords } from '../../agent/records.js'
import type { ToolCallView, TurnView } from '../../agent/schemas.js'
import type { Store } from '../../persistence/index.js'
import { turnCounts, usageLine } from './printer.js'

const oneLine = (s: string | null, max = 60): string => {
  const first = (s ?? '').split('\n').find((l) => l.trim() !== '') ?? ''
  return first.length > max ? `${first.slice(0, max - 1)}…` : first
}

export type TurnWithJournal = TurnView & { journal: ToolCallView[] }

// A session's agent turns, each with its tool-call journal (`vis sessions show`).
export function sessionTurns(store: Store, sessionId: string): TurnWithJournal[] {
  const records = new AgentRecords(store)
  return records.turnIds(sessionId).map((id) => ({ ...records.turn(id)!, journal: records.toolCalls(id) }))
}

export function turnLines(turns: readonly TurnWithJournal[]): string[] {
  if (turns.length === 0) return []
  const out = [`turns    ${turns.length}`]
  for (const t of turns) {
    out.push(
      `  turn ${t.position} ${t.status.padEnd(9)} ${t.model ?? ''}  ${usageLine(t.usage, turnCounts(t.iterations.length))}`,
      `    prompt  ${oneLine(t.prompt)}`,
    )
    if (t.answer !== null) out.push(`    answer  ${oneLine(t.answer)}`)
    if (t.error) out.push(`    error   ${t.error.code}: ${oneLine(t.error.message)}`)
    for (const c of t.journal) {
      const approval = c.approval
        ? `  approval ${c.approval.status}${c.approval.decided_by ? ` by ${c.approval.decided_by}` : ''}`
        : ''
      const result = c.ok ? `${c.result_bytes ?? 0} B` : `error: ${oneLine(c.error, 40)}`
      out.push(
        `    call    ${c.tool.padEnd(12)} ${c.duration_ms.toFixed(1).padStart(8)} ms  args ${c.args_sha256.slice(0, 12)} (${c.args_bytes} B)  ${result}${approval}`,
      )
    }
  }
  return out
}
