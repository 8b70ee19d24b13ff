import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { errorMessage, isVisError } from '../util/errors.js'
import { packageRoot } from '../util/home.js'
import { homeFailure } from '../util/home-writable.js'
import type { Command } from './command.js'
import { commands } from './commands/index.js'

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string })
      .version
  } catch {
    return 'unknown'
  }
}

function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length), 4)
  const lines = [...commands, { name: 'help', summary: 'Show help for vis or for one command' }].map(
    (c) => `  ${c.name.padEnd(width)}  ${c.summary}`,
  )
  return [
    `vis ${packageVersion()}: an embedded, confined CPython for agent hosts`,
    '',
    'Usage: vis <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `vis help <command>` or `vis <command> --help` for its options.',
  ].join('\n')
}

// VisError codes that mean the command line itself was wrong (exit 2, like parseArgs' errors):
// dist.version is a --python (or VIS_PYTHON_VERSION) naming a minor vis does not support.
const USAGE_ERRORS = new Set(['cli.bad-option', 'cli.missing-argument', 'bundle.usage', 'dist.version'])

function find(name: string): Command | undefined {
  return commands.find((c) => c.name === name)
}

// Options after `--` belong to the command's operands, not to us.
function wantsHelp(argv: string[]): boolean {
  const end = argv.indexOf('--')
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h')
}

export async function main(argv: string[]): Promise<void> {
  process.exitCode = await dispatch(argv)
}

async function dispatch(argv: string[]): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h') {
    console.log(overview())
    return 0
  }
  if (name === '--version' || name === '-v') {
    console.log(packageVersion())
    return 0
  }
  if (name === 'help') {
    const topic = rest[0]
    if (topic === undefined || topic === '--help' || topic === '-h') {
      console.log(overview())
      return 0
    }
    const cmd = find(topic)
    if (!cmd) return unknown(topic)
    console.log(cmd.usage)
    return 0
  }
  const cmd = find(name)
  if (!cmd) return unknown(name)
  if (!cmd.rawArgs && wantsHelp(rest)) {
    console.log(cmd.usage)
    return 0
  }
  try {
    return await cmd.run(rest)
  } catch (caught) {
    // An unwritable home fails many commands in many places: one line naming it, whatever
    // call saw it first.
    const err = homeFailure(caught) ?? caught
    if (isVisError(err)) {
      console.error(`vis ${name}: ${err.message} [${err.code}]`)
      // A bad option value or a missing operand is a usage error, as an unknown option is.
      return USAGE_ERRORS.has(err.code) ? 2 : 1
    }
    // parseArgs reports bad options with ERR_PARSE_ARGS_* codes: a usage error.
    const code = (err as NodeJS.ErrnoException).code ?? ''
    if (code.startsWith('ERR_PARSE_ARGS')) {
      console.error(`vis ${name}: ${errorMessage(err)}\n\n${cmd.usage}`)
      return 2
    }
    console.error(`vis ${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
    return 1
  }
}

function unknown(name: string): number {
  console.error(`vis: unknown command "${name}"\n\n${overview()}`)
  return 2
}
