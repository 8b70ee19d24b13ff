// `vis python`'s own entry (bin/vis.js picks it): python3 starts in ~20 ms, and loading every
// command's modules (HTTP server, providers, MCP) costs ~0.7 s it never uses.
import { python } from './commands/python.js'
import { reportFailure } from './report-error.js'

export async function main(argv: string[]): Promise<void> {
  try {
    process.exitCode = await python.run(argv)
  } catch (caught) {
    process.exitCode = reportFailure(python.name, caught, python.usage)
  }
}
