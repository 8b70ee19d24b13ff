import type { AgentEvent } from '../../agent/host.js'
import type { ApprovalView, UsageView } from '../../agent/schemas.js'
import { hitTokenLimit } from '../../agent/transcript.js'
import { jsonText, STDOUT_CLIP_CHARS } from '../../format/block-text.js'
import { argsText } from './ask.js'
import { visibleControls } from './visible.js'

const n = (x: number) => x.toLocaleString('en-US')

const counted = (k: number, unit: string) => `${k} ${unit}${k === 1 ? '' : 's'}`

// `counts` leads the line: "3 iterations" after a turn, "2 turns · 5 iterations" for a session.
export function usageLine(u: UsageView | null | undefined, counts: string): string {
  if (!u) return counts
  const cached = u.cached > 0 ? ` (${n(u.cached)} cached)` : ''
  const reasoning = u.reasoning > 0 ? `, ${n(u.reasoning)} reasoning` : ''
  const cost = u.cost_usd === null ? '' : ` · $${u.cost_usd.toFixed(4)}`
  return `${counts} · ${n(u.input)} in${cached} / ${n(u.output)} out${reasoning} tokens${cost}`
}

export const turnCounts = (iterations: number): string => counted(iterations, 'iteration')

export const sessionCounts = (turns: number, iterations: number): string =>
  `${counted(turns, 'turn')} · ${counted(iterations, 'iteration')}`

// What `vis run` and `vis chat` show of a turn: the model's text as it streams, each block with
// its output (clipped where the model's copy is clipped), its value, errors, refused tool calls,
// retries, and the end. What a person reads is what the model read.
export class TurnPrinter {
  private atLineStart = true
  private iterations = 0
  // The running block's output: characters shown, and characters held back past the clip.
  private shown = 0
  private hidden = 0

  // Everything printed carries the sandbox's text (its output, values, errors, paths) and the
  // model's: control characters are shown, never sent raw to the terminal (visible.ts).
  private readonly err: { write(s: string): void }

  constructor(
    private readonly out: NodeJS.WritableStream,
    err: NodeJS.WritableStream,
  ) {
    this.err = { write: (s: string) => err.write(visibleControls(s)) }
  }

  private write(s: string): void {
    if (s === '') return
    this.out.write(visibleControls(s))
    this.atLineStart = s.endsWith('\n')
  }

  private newline(): void {
    if (!this.atLineStart) this.write('\n')
  }

  on(ev: AgentEvent): void {
    switch (ev.type) {
      // Each turn's summary counts its own iterations (vis chat runs many turns on one printer).
      case 'turn.started':
        this.iterations = 0
        return
      case 'iteration.started':
        this.iterations++
        return
      case 'model.delta':
        this.write(String(ev.text))
        return
      case 'block.started': {
        this.newline()
        const code = String(ev.code)
          .split('\n')
          .map((l) => `│ ${l}`)
          .join('\n')
        this.write(`┌─ python\n${code}\n└─ output:\n`)
        this.shown = 0
        this.hidden = 0
        return
      }
      case 'block.output': {
        const data = String(ev.data)
        const room = Math.max(0, STDOUT_CLIP_CHARS - this.shown)
        this.write(data.slice(0, room))
        this.shown += Math.min(room, data.length)
        this.hidden += Math.max(0, data.length - room)
        return
      }
      case 'block.ended': {
        const e = ev.error as { phase?: string; code?: string; message?: string } | null
        this.newline()
        if (this.hidden > 0) {
          const total = this.shown + this.hidden
          this.err.write(
            `[output clipped as for the model: ${n(this.hidden)} of ${n(total)} characters not shown]\n`,
          )
        }
        // The result, or the value after the output (the model reads both, notebook-style).
        const value = ev.result ?? ev.value
        if (value !== null && value !== undefined) this.write(`→ ${jsonText(value)}\n`)
        if (e) this.write(`✗ ${e.phase ?? e.code ?? 'block'} error: ${String(e.message).split('\n')[0]}\n`)
        return
      }
      case 'approval.resolved': {
        // A refused call is part of what the model saw; say so even where nobody was asked.
        const a = ev.approval as ApprovalView
        if (a.status === 'approved') return
        const why = a.note ? `: ${a.note}` : ''
        this.newline()
        this.err.write(
          `[refused: ${a.tool}(${argsText(a.args)}) ${a.status} by ${a.decided_by ?? 'nobody'}${why}]\n`,
        )
        return
      }
      case 'model.reply':
        // A reply the token limit cut is not whole: say so, or a cut answer reads as the answer.
        if (hitTokenLimit(ev.stop as string | null)) {
          this.newline()
          this.err.write(
            `[the reply reached the model's output token limit (stop: ${ev.stop}) and is cut off]\n`,
          )
        }
        return
      case 'model.retry':
        this.newline()
        this.err.write(
          `[model: ${ev.message}${ev.compacting ? '; compacting the conversation and retrying' : ev.retrying ? `; retrying in ${ev.wait_ms} ms` : ''}]\n`,
        )
        return
      case 'turn.compacted':
        this.newline()
        this.err.write(
          `[context compacted (${ev.reason}): ${ev.folded_messages} messages folded into a summary, ~${ev.tokens_before} → ~${ev.tokens_after} tokens of a ${ev.window}-token window]\n`,
        )
        return
      case 'turn.warning':
        this.err.write(`[warning: ${ev.path ?? ''} ${ev.reason ?? ''}]\n`)
        return
      case 'turn.completed':
        this.newline()
        this.err.write(`[done · ${usageLine(ev.usage as UsageView, turnCounts(this.iterations))}]\n`)
        return
      case 'turn.failed':
        this.newline()
        this.err.write(`✗ the turn failed: ${(ev.error as { message: string }).message}\n`)
        return
      case 'turn.cancelled':
        this.newline()
        this.err.write('[cancelled]\n')
        return
      default:
        return
    }
  }
}
