import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { VisError } from '../../util/errors.js'
import { sendFirstRequest, testHoldBeforeSession } from '../agent/first-request.js'
import { AGENT_OPTIONS, AGENT_USAGE, prepareAgentCli, titleFromTask } from '../agent/options.js'
import { reviewDecision } from '../agent/review.js'
import { visibleJson } from '../agent/visible.js'
import type { Command } from '../command.js'

const usage = `Usage: vis run [options] "task"

Run one agent turn with the current directory as the session's root: the model writes Python,
the session runs it, until the answer. Streams the model's text, each block and its output, and
the answer. Ctrl-C cancels the turn (the model request is aborted, the block interrupted).
"/<template> args" runs a prompt template (.vis/prompts/<name>.md, or ~/.vis/prompts/).

${AGENT_USAGE}
  --apply / --no-apply with --review: land the turn's changes, or drop them, without asking
                       (without a terminal and without either, nothing lands)
  --json               print the finished turn as JSON on stdout instead of streaming

Exit status: 0 answered, 1 failed, 2 usage error, 130 cancelled.`

export const run: Command = {
  name: 'run',
  usage,
  async run(argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        ...AGENT_OPTIONS,
        json: { type: 'boolean', default: false },
        apply: { type: 'boolean', default: false },
        'no-apply': { type: 'boolean', default: false },
      },
    })
    const decision = reviewDecision(values)
    const task = positionals.join(' ').trim()
    if (task === '') throw new VisError('cli.missing-argument', `vis run needs a task.\n\n${usage}`)
    const tty = process.stdin.isTTY === true
    const prepared = prepareAgentCli(values, tty)
    // The first model request goes out before the engine, the worker and the session are even
    // loaded (first-request.ts); they start while it is in flight.
    const first = await sendFirstRequest(values, prepared, task)
    await testHoldBeforeSession()
    let cli: Awaited<ReturnType<typeof import('../agent/setup.js').openAgentCli>>
    const [
      { openAgentCli },
      { approvalPrompter, Lines },
      { TurnPrinter },
      { dropFailedReview, finishReview, startReview },
    ] = await Promise.all([
      import('../agent/setup.js'),
      import('../agent/ask.js'),
      import('../agent/printer.js'),
      import('../agent/review.js'),
    ])
    try {
      cli = await openAgentCli(values, tty, titleFromTask(task), prepared)
    } catch (err) {
      first.early?.abort()
      throw err
    }
    const { engine, agent, sessionId } = cli
    const rl = tty ? createInterface({ input: process.stdin, output: process.stderr }) : undefined
    const ac = new AbortController()
    let interrupts = 0
    const onInt = () => {
      interrupts++
      if (interrupts > 1) process.exit(130)
      process.stderr.write('\n[cancelling: Ctrl-C again to quit at once]\n')
      ac.abort()
    }
    process.on('SIGINT', onInt)
    rl?.on('SIGINT', onInt)
    try {
      const roots = (engine.sessionView(sessionId).policy as { roots: string[] }).roots
      const mode = cli.mode === 'workspace' ? '' : ` · ${cli.mode}`
      process.stderr.write(`[session ${sessionId} · root ${roots.join(', ')}${mode}]\n`)
      if ((values.apply || values['no-apply']) && cli.mode !== 'review') {
        // The session this command made for the turn goes with the refusal.
        if (cli.created) await engine.closeSession(sessionId)
        first.early?.abort()
        throw new VisError('cli.bad-option', '--apply and --no-apply go with --review (mode review)')
      }
      const lines = rl ? new Lines(rl) : undefined
      if (cli.mode === 'review') await startReview(engine, sessionId, `review: ${titleFromTask(task)}`)
      const printer = new TurnPrinter(process.stdout, process.stderr)
      const offs = [
        values.json ? () => undefined : agent.subscribe(sessionId, (ev) => printer.on(ev)),
        rl ? agent.subscribe(sessionId, approvalPrompter(agent, lines!, process.stderr)) : () => undefined,
      ]
      const out = values.json ? process.stderr : process.stdout
      let r: Awaited<ReturnType<typeof agent.turn>>
      try {
        r = await agent.turn(sessionId, task, {
          signal: ac.signal,
          ...(cli.model ? { model: cli.model } : {}),
          ...(cli.maxIterations ? { maxIterations: cli.maxIterations } : {}),
          ...(first.early ? { early: first.early } : {}),
          onPromptParts: first.onPromptParts,
        })
        for (const off of offs) off()
        // The review's end: the diff, then the person's decision (or the flag's).
        if (cli.mode === 'review') await finishReview(engine, sessionId, decision, out, lines)
      } catch (err) {
        // A continued session (--session) must not find this turn's draft (review.ts).
        if (cli.mode === 'review') await dropFailedReview(engine, sessionId, out)
        throw err
      }
      // One task, one session: the session this command made is closed with its turn (its
      // transcript stays: vis sessions show). One continued with --session stays as it was.
      if (cli.created) {
        await engine.closeSession(sessionId)
        process.stderr.write(`[session ${sessionId} closed · vis sessions show ${sessionId}]\n`)
      }
      if (values.json) process.stdout.write(`${visibleJson(r)}\n`)
      return r.status === 'done' ? 0 : r.status === 'cancelled' ? 130 : 1
    } finally {
      first.early?.abort()
      process.off('SIGINT', onInt)
      rl?.close()
      await engine.close()
    }
  },
}
