import { errorMessage } from '../util/errors.js'
import { DEFAULT_COMPACT_AT, estimateTokens } from './context-window.js'
import { type LiveState, liveStateText } from './live-state.js'
import type { Message, Part, Provider, Usage } from './providers/types.js'
import { zeroUsage } from './providers/types.js'

// Turns longer than the model's context window. Before a request that would fill too much of the
// window (or after the provider refused one for its size), the messages before the kept tail are
// replaced by a summary the model writes in a separate request. What stays, verbatim: the system
// prompt (not part of the history), the turn's task, the last iterations. The summary rides in the
// task's message as a second part, with the note the model left (fold_session) and the session's
// live state. Only the conversation sent to the model shrinks: the stored rows keep everything.

export const DEFAULT_KEEP = 2
// A fresh compaction leaves this share of the window or less, so the next ones are not one
// request apart.
const KEPT_SHARE = 0.5
// The summary request's own input: at most this share of the window (the transcript is clipped).
const SUMMARY_INPUT_SHARE = 0.6
const CHARS_PER_TOKEN = 3.5

export type CompactReason = 'threshold' | 'refused' | 'fold'

export type CompactInput = {
  provider: Provider
  window: number
  system: string
  toolCalling: boolean
  history: Message[]
  // Where the running turn's task is in `history`.
  taskIndex: number
  keep: number
  reason: CompactReason
  note?: string
  signal: AbortSignal
  live: () => Promise<LiveState | undefined>
}

export type Compacted = {
  reason: CompactReason
  folded_messages: number
  kept_iterations: number
  tokens_before: number
  tokens_after: number
  window: number
  summary_chars: number
  summary_error: string | null
  usage: Usage
}

export const shouldCompact = (tokens: number, window: number, at = DEFAULT_COMPACT_AT) => tokens > window * at

// The turn's messages after its task, as iterations: each starts at a reply and holds what its
// calls did. A message before the first reply (none today) goes with the folded part.
function iterations(after: Message[]): { lead: Message[]; groups: Message[][] } {
  const lead: Message[] = []
  const groups: Message[][] = []
  for (const m of after) {
    if (m.role === 'assistant') groups.push([m])
    else if (groups.length > 0) groups[groups.length - 1]!.push(m)
    else lead.push(m)
  }
  return { lead, groups }
}

// Replaces the history's older part with a summary, in place; undefined when there is nothing
// older than the kept tail to fold.
export async function compact(c: CompactInput): Promise<Compacted | undefined> {
  const before = estimateTokens(c.system, c.history, c.toolCalling)
  const task = c.history[c.taskIndex]
  if (task?.role !== 'user') return undefined
  const earlier = c.history.slice(0, c.taskIndex)
  const { lead, groups } = iterations(c.history.slice(c.taskIndex + 1))
  const taskMessage: Message = { role: 'user', content: [task.content[0]!] }
  // As many of the last iterations as fit in the kept share; a refusal keeps one fewer than what
  // was just refused, so the retry is smaller.
  // A fold on purpose keeps only the iteration that asked for it (its call needs its result).
  let keep = Math.min(c.reason === 'fold' ? 1 : c.keep, groups.length)
  if (c.reason === 'refused' && earlier.length === 0 && lead.length === 0 && task.content.length < 2)
    keep = Math.min(keep, groups.length - 1)
  while (
    keep > 0 &&
    estimateTokens(c.system, [taskMessage, ...groups.slice(groups.length - keep).flat()], c.toolCalling) >
      c.window * KEPT_SHARE
  )
    keep--
  keep = Math.max(keep, 0)
  const folded = [
    ...earlier,
    ...task.content.slice(1).map(asUser),
    ...lead,
    ...groups.slice(0, groups.length - keep).flat(),
  ]
  if (folded.length === 0 && c.note === undefined) return undefined
  const kept = groups.slice(groups.length - keep).flat()

  const taskText = task.content[0]?.type === 'text' ? task.content[0].text : ''
  const written = await summarise(c, taskText, folded)
  const state = await c.live().catch(() => undefined)
  const note = compactionNote({
    folded: folded.length,
    summary: written.text,
    note: c.note,
    state,
  })
  const replaced: Message = { role: 'user', content: [task.content[0]!, { type: 'text', text: note }] }
  c.history.splice(0, c.history.length, replaced, ...kept)
  return {
    reason: c.reason,
    folded_messages: folded.length,
    kept_iterations: keep,
    tokens_before: before,
    tokens_after: estimateTokens(c.system, c.history, c.toolCalling),
    window: c.window,
    summary_chars: written.text.length,
    summary_error: written.error,
    usage: written.usage,
  }
}

const asUser = (p: Part): Message => ({ role: 'user', content: [p] })

const SUMMARY_SYSTEM = [
  'You summarise the earlier part of an agent session so that the agent can go on without it.',
  'The agent works by running blocks of Python (globals persist between blocks) and host tools such as cat, patch, grep and shell.',
  'Write a compact summary in plain text: what the task needs, what was found (facts, file paths, line anchors, numbers),',
  'what was changed and how it was checked, what failed and why, and what remains to do.',
  'Keep exact names, paths and values; leave out anything the agent will not need. Do not call tools; do not answer the task.',
].join(' ')

async function summarise(
  c: CompactInput,
  task: string,
  folded: Message[],
): Promise<{ text: string; error: string | null; usage: Usage }> {
  if (folded.length === 0) return { text: '', error: null, usage: zeroUsage() }
  const budget =
    Math.floor(c.window * SUMMARY_INPUT_SHARE * CHARS_PER_TOKEN) - SUMMARY_SYSTEM.length - task.length
  const transcript = transcriptText(folded, Math.max(2_000, budget))
  const ask =
    `The task the agent is working on:\n${task}\n\n` +
    `The part of the session to summarise (older first):\n${transcript}\n\n` +
    'Write the summary now.'
  try {
    const reply = await c.provider.complete({
      system: SUMMARY_SYSTEM,
      messages: [{ role: 'user', content: [{ type: 'text', text: ask }] }],
      tools: false,
      toolChoice: 'none',
      signal: c.signal,
      onDelta: () => {},
    })
    if (reply.text.trim() !== '') return { text: reply.text.trim(), error: null, usage: reply.usage }
    return { text: mechanical(folded), error: 'the summary request returned no text', usage: reply.usage }
  } catch (err) {
    if (c.signal.aborted) throw err
    // The turn goes on: a summary the host writes itself (what ran, in order) beats ending it.
    return { text: mechanical(folded), error: errorMessage(err), usage: zeroUsage() }
  }
}

// The folded messages as text for the summary request, within `max` characters: each long
// message keeps its head and tail; past that, the oldest messages are left out.
export function transcriptText(messages: Message[], max: number): string {
  const entries = messages.map(messageText)
  const total = entries.reduce((a, e) => a + e.length, 0)
  if (total <= max) return entries.join('\n\n')
  const each = Math.max(240, Math.floor(max / entries.length))
  let clipped = entries.map((e) => clip(e, each))
  let dropped = 0
  while (clipped.length > 1 && clipped.reduce((a, e) => a + e.length + 2, 0) > max) {
    clipped = clipped.slice(1)
    dropped++
  }
  return (dropped > 0 ? `[${dropped} older messages left out]\n\n` : '') + clipped.join('\n\n')
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text
  const half = Math.floor((max - 40) / 2)
  return `${text.slice(0, half)}\n…[${text.length - 2 * half} characters left out]…\n${text.slice(-half)}`
}

function messageText(m: Message): string {
  if (m.role === 'assistant') {
    const code = m.toolCalls.map((call) => {
      try {
        const c = (JSON.parse(call.arguments) as { code?: unknown }).code
        return typeof c === 'string' ? `[block]\n${c}` : `[call ${call.name}] ${call.arguments}`
      } catch {
        return `[call ${call.name}] ${call.arguments}`
      }
    })
    return [`ASSISTANT: ${m.text}`.trimEnd(), ...code].join('\n')
  }
  const text = m.content.map((p) => (p.type === 'text' ? p.text : `[image ${p.mediaType}]`)).join('\n')
  return m.role === 'tool' ? `BLOCK RESULT:\n${text}` : `USER: ${text}`
}

// What the folded iterations ran, first lines only: the summary when the model could not write one.
function mechanical(folded: Message[]): string {
  const lines: string[] = []
  for (const m of folded) {
    if (m.role !== 'assistant') continue
    for (const call of m.toolCalls) {
      let code = call.arguments
      try {
        const c = (JSON.parse(call.arguments) as { code?: unknown }).code
        if (typeof c === 'string') code = c
      } catch {}
      lines.push(`- ran: ${code.split('\n').slice(0, 2).join(' ⏎ ').slice(0, 160)}`)
    }
  }
  return ['(No summary could be written; the blocks the folded iterations ran, in order:)', ...lines].join(
    '\n',
  )
}

function compactionNote(n: {
  folded: number
  summary: string
  note: string | undefined
  state: LiveState | undefined
}) {
  const parts = [
    `[Context compacted: ${n.folded} earlier messages were replaced by this summary to fit the model's context window. ` +
      'The full transcript is stored; the iterations after this message are verbatim.]',
  ]
  if (n.summary !== '') parts.push(`## Summary of the earlier work\n${n.summary}`)
  if (n.note !== undefined && n.note.trim() !== '')
    parts.push(`## Your note (fold_session)\n${n.note.trim()}`)
  const live = n.state ? liveStateText(n.state) : ''
  if (live !== '') parts.push(`## Live state of the session\n${live}`)
  return parts.join('\n\n')
}
