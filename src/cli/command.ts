// A CLI command: one module in src/cli/commands/, listed in commands/index.ts.
export type Command = {
  name: string
  // One line for `vis help`.
  summary: string
  // The full text for `vis help <name>` and `vis <name> --help`.
  usage: string
  // Pass every argument through untouched (no --help interception): `vis python script.py -h`.
  rawArgs?: boolean
  // Returns the process exit code.
  run(argv: string[]): Promise<number>
}
