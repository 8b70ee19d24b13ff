import { AgentRecords } from '../../agent/records.js'
import type { ApprovalView, ToolCallView, TurnView } from '../../agent/schemas.js'
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

export type AgentExport = { turns: TurnWithJournal[]; approvals: ApprovalView[] }

// What `vis sessions export` adds to the transcript for agent sessions: the conversation the
// model had (its text each iteration, the answer, token usage) and every approval, refused or not.
export function sessionAgent(store: Store, sessionId: string): AgentExport {
  return { turns: sessionTurns(store, sessionId), approvals: new AgentRecords(store).approvals(sessionId) }
}

const quoted = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => `> ${l}`)
    .join('\n')

export function agentMarkdown(a: AgentExport): string {
  if (a.turns.length === 0) return ''
  const out = ['', '## Agent turns', '']
  for (const t of a.turns) {
    out.push(
      `### Turn ${t.position} · ${t.status} · ${t.model ?? 'no model'}`,
      '',
      `${usageLine(t.usage, turnCounts(t.iterations.length))}`,
      '',
    )
    if (t.prompt) out.push('**Task**', '', quoted(t.prompt), '')
    for (const it of t.iterations) {
      const calls = it.tool_calls.length > 0 ? ` · ${it.tool_calls.length} block(s)` : ''
      const used = it.usage ? ` · ${usageLine(it.usage, 'tokens')}` : ''
      out.push(`- iteration ${it.position}${calls}${used}`)
      if (it.text) out.push('', quoted(it.text), '')
    }
    const refused = a.approvals.filter((x) => x.turn_id === t.id && x.status !== 'approved')
    for (const r of refused) {
      const args = JSON.stringify(r.args)
      out.push(
        `- refused: \`${r.tool}\` ${args.length > 200 ? `${args.slice(0, 200)}…` : args} — ${r.status} by ${r.decided_by ?? 'nobody'}${r.note ? `: ${r.note}` : ''}`,
      )
    }
    for (const c of t.journal.filter((c) => !c.ok && !c.approval)) {
      out.push(`- failed call: \`${c.tool}\` — ${(c.error ?? '').split('\n')[0]}`)
    }
    if (t.answer !== null) out.push('', '**Answer**', '', quoted(t.answer))
    if (t.error) out.push('', `**Error** ${t.error.code}: ${t.error.message}`)
    out.push('')
  }
  return out.join('\n')
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
