// A CLI command: one module in src/cli/commands/, listed in commands/index.ts.
export type Command = {
  name: string
  // The full text for `vis help <name>` and `vis <name> --help`.
  usage: string
  // Pass every argument through untouched (no --help interception): `vis python script.py -h`.
  rawArgs?: boolean
  // Returns the process exit code.
  run(argv: string[]): Promise<number>
}

// What the CLI knows of a command before loading its module: `vis help` lists these.
export type CommandEntry = {
  name: string
  // One line for `vis help`.
  summary: string
  load: () => Promise<Command>
}

// The run() of a command made of subcommands (`vis runtime status`, `vis sessions list`):
// the first argument picks one; none or an unknown one is a usage error (exit 2).
export function subcommands(
  name: string,
  usage: string,
  table: Record<string, (argv: string[]) => number | Promise<number>>,
): (argv: string[]) => Promise<number> {
  return async (argv) => {
    const [sub, ...rest] = argv
    const run = sub !== undefined && Object.hasOwn(table, sub) ? table[sub] : undefined
    if (run) return run(rest)
    const why = sub === undefined ? 'a subcommand is needed' : `unknown subcommand "${sub}"`
    process.stderr.write(`vis ${name}: ${why}\n\n${usage}\n`)
    return 2
  }
}
