import { readFileSync, realpathSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { loadPython } from '../../native/index.js'
import type { Command } from '../command.js'

const usage = `Usage: vis python [-c CODE | SCRIPT | -] [ARG...]

Run Python in this process's embedded interpreter, the way python3 would:
  -c CODE   run CODE (sys.argv[0] is "-c")
  SCRIPT    run the file (sys.argv[0] is SCRIPT, sys.path[0] its directory)
  -         read the program from stdin (also with no operand)
ARGs go to sys.argv; the environment to os.environ; stdin, stdout and stderr are the
terminal's. Exit status as python3: 0, SystemExit's code, 1 for an uncaught exception,
130 for Ctrl-C (KeyboardInterrupt), 2 for a usage error.

This is your own terminal, so no sandbox applies: the audit hook is not installed
and sys.stdout/sys.stderr are python3's own fd-backed streams.`

type Program = { code: string; filename: string; argv: string[]; path0: string }

// python3's command line, reduced to what selects the program.
function parse(argv: string[]): Program | { error: string; status: number } {
  const [first, ...rest] = argv[0] === '--' ? argv.slice(1) : argv
  if (first === '-c') {
    if (rest.length === 0) return { error: 'Argument expected for the -c option', status: 2 }
    return { code: rest[0]!, filename: '<string>', argv: ['-c', ...rest.slice(1)], path0: '' }
  }
  if (first === undefined || first === '-') {
    return {
      code: readFileSync(0, 'utf8'),
      filename: '<stdin>',
      argv: first ? ['-', ...rest] : [''],
      path0: '',
    }
  }
  if (first.startsWith('-')) return { error: `unknown option ${first}`, status: 2 }
  let code: string
  try {
    code = readFileSync(first, 'utf8')
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    const why = e.code === 'ENOENT' ? '[Errno 2] No such file or directory' : e.message
    return { error: `can't open file '${first}': ${why}`, status: 2 }
  }
  // python3 shows (and sets __file__ to) the absolute path, symlinks kept.
  return { code, filename: resolve(first), argv: [first, ...rest], path0: dirname(realpathSync(first)) }
}

export const python: Command = {
  name: 'python',
  summary: 'Run Python (-c CODE, a script, or stdin) in the embedded interpreter, like python3',
  usage,
  rawArgs: true,
  async run(argv) {
    if (argv[0] === '--help' || argv[0] === '-h') {
      process.stdout.write(`${usage}\n`)
      return 0
    }
    const program = parse(argv)
    if ('error' in program) {
      process.stderr.write(`vis python: ${program.error}\n`)
      return program.status
    }
    const rt = await loadPython({
      argv: program.argv,
      sysPath: [program.path0],
      guest: false,
      capture: false,
      audit: false,
    })
    // Node owns SIGINT; a Ctrl-C becomes a KeyboardInterrupt in the running code.
    const onSigint = () => rt.interrupt()
    process.on('SIGINT', onSigint)
    try {
      const outcome = await rt.runMain(program.code, program.filename)
      let status = 0
      if (!outcome.ok) {
        const { type, exitCode } = outcome.error
        status = type === 'SystemExit' ? (exitCode ?? 1) : type === 'KeyboardInterrupt' ? 130 : 1
      }
      const finalized = await rt.close()
      return status === 0 ? finalized : status
    } finally {
      process.off('SIGINT', onSigint)
    }
  },
}
