import { errorMessage, isVisError } from '../util/errors.js'
import { homeFailure } from '../util/home-writable.js'
import { visibleControls } from './agent/visible.js'

// VisError codes that mean the command line itself was wrong (exit 2, like parseArgs' errors):
// dist.version is a --python (or VIS_PYTHON_VERSION) naming a minor vis does not support.
const USAGE_ERRORS = new Set([
  'cli.bad-option',
  'cli.missing-argument',
  'cli.session-mode-mismatch',
  'bundle.usage',
  'dist.version',
])

// How a command's failure is told on stderr, and its exit status: one line for a VisError (an
// unwritable home included, whatever call saw it first), usage for a bad option, else the stack.
export function reportFailure(name: string, caught: unknown, usage: string): number {
  const err = homeFailure(caught) ?? caught
  if (isVisError(err)) {
    // A message may name what a sandbox made (a draft's files, a session's paths): shown, not
    // obeyed (visible.ts).
    console.error(visibleControls(`vis ${name}: ${err.message} [${err.code}]`))
    // A bad option value or a missing operand is a usage error, as an unknown option is.
    return USAGE_ERRORS.has(err.code) ? 2 : 1
  }
  // parseArgs reports bad options with ERR_PARSE_ARGS_* codes: a usage error.
  const code = (err as NodeJS.ErrnoException).code ?? ''
  if (code.startsWith('ERR_PARSE_ARGS')) {
    console.error(`vis ${name}: ${errorMessage(err)}\n\n${usage}`)
    return 2
  }
  console.error(
    visibleControls(`vis ${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
  )
  return 1
}
