import type { CommandEntry } from '../command.js'

// Every command the CLI knows, by name and one line for `vis help`. Only the command that runs is
// imported (the agent's and the server's modules take a second to load; `vis help` takes none of
// it). Add a command by adding its module here.
export const commands: CommandEntry[] = [
  {
    name: 'runtime',
    summary: 'Show, fetch or stage the CPython distribution',
    load: async () => (await import('./runtime.js')).runtime,
  },
  {
    name: 'doctor',
    summary: 'Report which confinement layers this machine enforces',
    load: async () => (await import('./doctor.js')).doctor,
  },
  {
    name: 'python',
    summary: 'python3 in the embedded interpreter: -c, -m, a script, stdin or the REPL, with python3 options',
    load: async () => (await import('./python.js')).python,
  },
  {
    name: 'serve',
    summary: 'Serve the HTTP API and the session page (loopback, with a token, by default)',
    load: async () => (await import('./serve.js')).serve,
  },
  {
    name: 'sessions',
    summary: 'List, show and export stored sessions',
    load: async () => (await import('./sessions.js')).sessions,
  },
  {
    name: 'bench',
    summary: 'Measure session worker round trips against a same-run baseline',
    load: async () => (await import('./bench.js')).bench,
  },
  {
    name: 'ext',
    summary: 'List, reload and test trusted Python extensions',
    load: async () => (await import('./ext.js')).ext,
  },
  {
    name: 'mcp',
    summary: 'Serve vis as an MCP server over stdio',
    load: async () => (await import('./mcp.js')).mcp,
  },
  {
    name: 'bundle',
    summary: 'Make (or verify) an offline install bundle',
    load: async () => (await import('./bundle.js')).bundle,
  },
  {
    name: 'run',
    summary: 'Run one agent turn in the current directory',
    load: async () => (await import('./run.js')).run,
  },
  {
    name: 'chat',
    summary: 'A conversation with the agent (line-edited REPL)',
    load: async () => (await import('./chat.js')).chat,
  },
  {
    name: 'cluster',
    summary: 'Run several vis serve nodes behind nginx (print the nginx configuration)',
    load: async () => (await import('./cluster.js')).cluster,
  },
]
