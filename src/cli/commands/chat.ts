import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { listTemplates } from '../../agent/templates.js'
import { errorMessage, isVisError, VisError } from '../../util/errors.js'
import { approvalPrompter, Lines } from '../agent/ask.js'
import { DRAFT_USAGE, runDraftCommand } from '../agent/draft-command.js'
import { sessionCounts, TurnPrinter, usageLine } from '../agent/printer.js'
import { dropFailedReview, finishReview, reviewDecision, startReview } from '../agent/review.js'
import { AGENT_OPTIONS, AGENT_USAGE, openAgentCli, titleFromTask } from '../agent/setup.js'
import { visibleControls } from '../agent/visible.js'
import type { Command } from '../command.js'

const usage = `Usage: vis chat [options]

A line-edited conversation with the agent over one session (the current directory as its root).
Each line is a turn; the session's history carries across turns. Ctrl-C cancels a running turn;
at the prompt, Ctrl-D (or /exit) quits.

  /<template> args     run a prompt template (.vis/prompts/<name>.md, or ~/.vis/prompts/)
  /templates           list the templates
  /usage               the session's tokens and cost so far
${DRAFT_USAGE}
  /exit                quit

${AGENT_USAGE}
  --apply / --no-apply with --review: land each turn's changes, or drop them, without asking`

// An error names what it is about (a draft conflict its files, a template its path): names the
// sandbox chose, shown, not obeyed (visible.ts).
const failureLine = (err: unknown) =>
  visibleControls(`✗ ${errorMessage(err)}${isVisError(err) ? ` [${err.code}]` : ''}\n`)

export const chat: Command = {
  name: 'chat',
  usage,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        ...AGENT_OPTIONS,
        apply: { type: 'boolean', default: false },
        'no-apply': { type: 'boolean', default: false },
      },
    })
    const decision = reviewDecision(values)
    const tty = process.stdin.isTTY === true
    const cli = await openAgentCli(values, true)
    const { engine, agent, sessionId } = cli
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: tty })
    const lines = new Lines(rl)
    let current: AbortController | undefined
    rl.on('SIGINT', () => {
      if (current) {
        process.stderr.write('\n[cancelling the turn]\n')
        current.abort()
      } else rl.close()
    })
    const printer = new TurnPrinter(process.stdout, process.stderr)
    const offs = [
      agent.subscribe(sessionId, (ev) => printer.on(ev)),
      agent.subscribe(sessionId, approvalPrompter(agent, lines, process.stdout)),
    ]
    const root = (engine.sessionView(sessionId).policy as { roots: string[] }).roots[0]
    if (decision !== 'ask' && cli.mode !== 'review') {
      await engine.close()
      throw new VisError('cli.bad-option', '--apply and --no-apply go with --review (mode review)')
    }
    const mode = cli.mode === 'workspace' ? '' : ` · ${cli.mode}`
    process.stdout.write(`vis chat · session ${sessionId}${mode} · /exit to quit\n`)
    try {
      for (;;) {
        const line = await lines.next('› ')
        if (line === null) break
        const text = line.trim()
        if (text === '') continue
        if (text === '/exit' || text === '/quit') break
        if (text === '/templates') {
          const names = listTemplates(agent.config.home, root)
          // Template names are file names in the root, which the sandbox writes (visible.ts).
          const shown = names.map((n) => `/${visibleControls(n)}`).join('  ')
          process.stdout.write(names.length ? `${shown}\n` : 'no templates\n')
          continue
        }
        if (text === '/usage') {
          const turns = agent.listTurns(sessionId)
          const iterations = turns.reduce((sum, t) => sum + t.iterations.length, 0)
          process.stdout.write(
            `${usageLine(agent.sessionUsage(sessionId), sessionCounts(turns.length, iterations))}\n`,
          )
          continue
        }
        if (text === '/draft' || text.startsWith('/draft ')) {
          // Built in: a prompt template named "draft" does not shadow it.
          await runDraftCommand(engine, sessionId, text).then(
            // A draft's diff carries the sandbox's bytes: control characters shown (visible.ts).
            (out) => process.stdout.write(`${visibleControls(out)}\n`),
            (err) => process.stderr.write(failureLine(err)),
          )
          continue
        }
        current = new AbortController()
        try {
          // Review: each turn writes a draft, shown and decided on when it ends.
          if (cli.mode === 'review') await startReview(engine, sessionId, `review: ${titleFromTask(text)}`)
          await agent.turn(sessionId, text, {
            signal: current.signal,
            ...(cli.model ? { model: cli.model } : {}),
            ...(cli.maxIterations ? { maxIterations: cli.maxIterations } : {}),
          })
          if (cli.mode === 'review') await finishReview(engine, sessionId, decision, process.stdout, lines)
        } catch (err) {
          // A bad template or model is reported; the conversation goes on.
          process.stderr.write(failureLine(err))
          // Its draft does not carry into the next turn (review.ts).
          if (cli.mode === 'review') await dropFailedReview(engine, sessionId, process.stdout)
        } finally {
          current = undefined
        }
      }
    } finally {
      for (const off of offs) off()
      rl.close()
      await engine.close()
    }
    return 0
  },
}
