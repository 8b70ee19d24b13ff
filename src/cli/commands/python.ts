import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { isatty } from 'node:tty'
import { loadPython, type Outcome, type PythonRuntime } from '../../native/index.js'
import { VisError } from '../../util/errors.js'
import { guestDir } from '../../util/home.js'
import type { Command } from '../command.js'

// CPython parses the command line itself (native/runtime/cli_main.cc), so -h prints
// python3's own usage; this text is what `vis help python` shows.
const usage = `Usage: vis python [option] ... [-c CODE | -m MODULE | SCRIPT | -] [ARG...]

python3, run by this process's embedded interpreter. Every python3 option works and is
parsed by CPython itself (-c, -m, -i, -u, -I, -E, -s, -S, -B, -O, -W, -X, -q, -V, -h, ...);
sys.flags, sys.orig_argv and sys.argv are python3's. With no operand on a terminal it
starts the interactive REPL (readline line editing and history, as python3).
sys.executable is the distribution's bin/python3.X: the same Python, the same sys.path.
Exit status as python3: 0, SystemExit's code, 1 for an uncaught exception, death by
SIGINT after the traceback for Ctrl-C (KeyboardInterrupt), 2 for a usage error. A Ctrl-C
before the program runs ends the process quietly by SIGINT, as in python3's start-up.
SIGINT inherited as ignored (a background job) is not honoured: Node resets inherited
signal dispositions before any JavaScript runs, so Ctrl-C's SIGINT is Python's as usual.

This is your own terminal, so no sandbox applies: the audit hook is not installed
and sys.stdout/sys.stderr are python3's own fd-backed streams.`

// An uncaught KeyboardInterrupt (not SystemExit(130)): the process re-raises SIGINT; 130 is
// its status only if that did not end it.
const INTERRUPTED = -130

function statusOf(outcome: Outcome): number {
  if (outcome.ok) return 0
  const { type, exitCode } = outcome.error
  return type === 'SystemExit' ? (exitCode ?? 1) : type === 'KeyboardInterrupt' ? INTERRUPTED : 1
}

// Runs what the command line names; undefined when it names nothing (stdin on a terminal).
async function runProgram(rt: PythonRuntime, stdinIsTty: boolean): Promise<number | undefined> {
  const plan = rt.commandLine!
  if (plan.command !== undefined) return statusOf(await rt.runMain(plan.command, '<string>'))
  if (plan.module !== undefined) return statusOf(await rt.runModule(plan.module))
  if (plan.file !== undefined) {
    // python3 shows (and sets __file__ to) the absolute path, symlinks kept.
    const file = resolve(plan.file)
    let code: string
    try {
      code = readFileSync(file, 'utf8')
    } catch (err) {
      const e = err as NodeJS.ErrnoException
      const why = e.code === 'ENOENT' ? '[Errno 2] No such file or directory' : e.message
      process.stderr.write(`${rt.distribution.executable}: can't open file '${file}': ${why}\n`)
      return 2
    }
    return statusOf(await rt.runMain(code, file))
  }
  if (stdinIsTty || plan.inspect) return undefined
  return statusOf(await rt.runMain(readFileSync(0, 'utf8'), '<stdin>'))
}

export const python: Command = {
  name: 'python',
  usage,
  rawArgs: true,
  async run(argv) {
    let rt: PythonRuntime
    try {
      rt = await loadPython({ argv, commandLine: true, guest: false, capture: false, audit: false })
    } catch (err) {
      // -h, -V and usage errors: CPython printed them already.
      if (err instanceof VisError && err.code === 'native.init-exit') return Number(err.context.status)
      throw err
    }
    // SIGINT is Python's, as in python3 (native/runtime/interp.cc: InstallSigint): no Node
    // listener, which would take the OS handler back. isatty, not process.stdin: that would
    // open a Node stream on the fd Python reads.
    const stdinIsTty = isatty(0)
    let status = await runProgram(rt, stdinIsTty)
    // -i after the program, or no operand on a terminal: python3's REPL.
    if (status === undefined || rt.commandLine!.inspect) {
      // No program: the banner (unless -q) and $PYTHONSTARTUP, as python3 (stdin is a
      // terminal, or -i was given).
      const noProgram = status === undefined
      status = statusOf(await rt.repl(noProgram && !rt.commandLine!.quiet, noProgram))
    }
    if (status === INTERRUPTED) {
      await exitBySigint(rt)
      status = 130
    }
    const finalized = await rt.close()
    return status === 0 ? finalized : status
  },
}

// python3 ends on an uncaught KeyboardInterrupt by re-raising SIGINT with its default action
// (after the traceback), so its parent sees death by signal, not exit 130, and a shell loop
// stops. Every host thread blocks SIGINT (native/runtime/signals.cc), so it is raised from the
// interpreter thread, after what finalization would do (vis-guest/vis_cli/exit_sigint.py).
// Returns only if the signal did not end the process.
async function exitBySigint(rt: PythonRuntime): Promise<void> {
  const file = join(guestDir, 'vis_cli', 'exit_sigint.py')
  await rt.runMain(readFileSync(file, 'utf8'), file)
}
