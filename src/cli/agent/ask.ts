import type { Interface } from 'node:readline'
import type { Agent, AgentEvent } from '../../agent/host.js'
import type { ApprovalView } from '../../agent/schemas.js'
import { visibleControls } from './visible.js'

// Lines from a readline interface, one at a time, whoever asks (the REPL or an approval prompt).
export class Lines {
  private readonly it: AsyncIterator<string>

  constructor(private readonly rl: Interface) {
    this.it = rl[Symbol.asyncIterator]()
  }

  async next(prompt: string): Promise<string | null> {
    this.rl.setPrompt(prompt)
    this.rl.prompt()
    const r = await this.it.next()
    return r.done ? null : r.value
  }
}

const SHORT_ARGS_CHARS = 300

const argsJson = (args: unknown): string =>
  (Array.isArray(args) ? args : [args]).map((x) => JSON.stringify(x)).join(', ')

// A call's arguments in a one-line note (a refused call, after the fact): cut when long.
export const argsText = (args: unknown): string => {
  const text = argsJson(args)
  return text.length > SHORT_ARGS_CHARS ? `${text.slice(0, SHORT_ARGS_CHARS)}…` : text
}

// A call's arguments in the question a person answers: whole, never a prefix. The guest chooses
// the arguments and their order, so any cut lets it put the part a rule matched (`rm -rf`, a
// path) past what is shown. Long arguments say their length so the person knows to read on;
// control characters are shown, never obeyed (visible.ts).
export const approvalArgsText = (args: unknown): string => {
  const text = visibleControls(argsJson(args))
  return text.length > SHORT_ARGS_CHARS
    ? `\n  [arguments: ${text.length} characters, shown whole]\n  ${text}\n`
    : text
}

// Asks on the terminal for each approval a turn requests; `y` approves, anything else denies and
// is kept as the note (an empty answer denies without one).
export function approvalPrompter(agent: Agent, lines: Lines, out: NodeJS.WritableStream) {
  let chain = Promise.resolve()
  return (ev: AgentEvent) => {
    if (ev.type !== 'approval.requested') return
    const a = ev.approval as ApprovalView
    chain = chain.then(async () => {
      if (agent.records.approval(a.id)?.status !== 'pending') return
      out.write(
        `\n? ${a.tool}(${approvalArgsText(a.args)}) needs approval (${visibleControls(String(a.reason))})\n`,
      )
      const answer = await lines.next('  approve? [y/N, or a reason to deny] ')
      const t = (answer ?? '').trim()
      const yes = /^(y|yes)$/i.test(t)
      try {
        agent.decide(
          a.session_id,
          a.id,
          yes ? 'approve' : 'deny',
          'terminal',
          yes || t === '' || /^(n|no)$/i.test(t) ? undefined : t,
        )
        out.write(yes ? '  approved\n' : '  denied\n')
      } catch (err) {
        out.write(`  ${(err as Error).message}\n`)
      }
    })
  }
}
