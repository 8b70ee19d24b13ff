import { z } from 'zod'
import { VisError } from '../../util/errors.js'
import { parseArgs, splitArgs } from '../args.js'
import type { PathGuard } from '../fs/paths.js'
import { runBounded } from '../proc/run.js'
import type { Tool } from '../types.js'
import { gitArgv, gitReadsOnly } from './guard.js'

const SIGNATURE = '(*args, timeout_secs=120)'

const Args = z
  .object({
    args: z.array(z.string()).min(1, 'give at least one git argument, e.g. git("status")'),
    timeout_secs: z.number().positive().max(3600).default(120),
  })
  .strict()

// Nothing interactive: no prompts, pagers or editors. The base environment
// (host pass-through, or the jail's) comes from the session's spawner.
export function gitVars(): Record<string, string> {
  return {
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    // /etc/gitconfig is the host's, not the session's.
    GIT_CONFIG_NOSYSTEM: '1',
  }
}

export function gitTool(guard: PathGuard): Tool {
  return {
    name: 'git',
    doc: 'Run git with these arguments in the workspace root, e.g. git("log", "--oneline", "-5"). The first argument is the subcommand (no options before it, no aliases); options that make git run another program are refused. Returns {cmd, args, stdout, stderr, exit, duration_ms, timed_out}; a non-zero exit is reported, not raised. Long output keeps its start and end.',
    signature: SIGNATURE,
    async run(args, ctx) {
      const { positional, kwargs } = splitArgs(args)
      const flat = positional.length === 1 && Array.isArray(positional[0]) ? positional[0] : positional
      const a = parseArgs('git', SIGNATURE, Args, { ...kwargs, args: flat })
      const frozen = guard.readOnlyRoots
      if (frozen?.roots.includes(guard.workspace) && !gitReadsOnly(a.args)) {
        throw new VisError(
          'tool.session-read-only',
          `git: 'git ${a.args[0]}' can change the repository and was not run: ${frozen.why}; reading commands (status, log, diff, show, blame, grep...) still run`,
          { sessionId: ctx.sessionId, op: 'git', path: guard.workspace },
        )
      }
      const cwd = (await guard.realRoots())[0]!
      const r = await runBounded('git', gitArgv(a.args, { sessionId: ctx.sessionId }), {
        cwd,
        env: gitVars(),
        timeoutMs: a.timeout_secs * 1000,
        signal: ctx.signal,
        spawn: ctx.spawn,
      })
      return {
        cmd: 'git',
        args: a.args,
        stdout: r.stdout,
        stderr: r.stderr,
        exit: r.exit,
        duration_ms: r.duration_ms,
        timed_out: r.timed_out,
      }
    },
  }
}
