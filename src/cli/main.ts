import { packageVersion } from '../util/package-version.js'
import type { CommandEntry } from './command.js'
import { commands } from './commands/index.js'
import { reportFailure } from './report-error.js'

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

function find(name: string): CommandEntry | undefined {
  return commands.find((c) => c.name === name)
}

// Options after `--` belong to the command's operands, not to us.
function wantsHelp(argv: string[]): boolean {
  const end = argv.indexOf('--')
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h')
}

// A reader that went away (`vis sessions list | head -3`) is not an error of ours: stop quietly,
// as a command killed by SIGPIPE would, instead of printing Node's EPIPE stack.
function quietOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err
      process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0)
    })
  }
}

export async function main(argv: string[]): Promise<void> {
  quietOnClosedPipe()
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
    const entry = find(topic)
    if (!entry) return unknown(topic)
    console.log((await entry.load()).usage)
    return 0
  }
  const entry = find(name)
  if (!entry) return unknown(name)
  const cmd = await entry.load()
  if (!cmd.rawArgs && wantsHelp(rest)) {
    console.log(cmd.usage)
    return 0
  }
  try {
    return await cmd.run(rest)
  } catch (caught) {
    return reportFailure(name, caught, cmd.usage)
  }
}

function unknown(name: string): number {
  console.error(`vis: unknown command "${name}"\n\n${overview()}`)
  return 2
}
