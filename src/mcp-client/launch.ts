import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { VisError } from '../util/errors.js'
import { absoluteEntries, programsOn } from '../util/host-programs.js'
import { type WritablePlaces, writablePlaces } from '../util/writable-roots.js'
import { checkServerEnv } from './server-env.js'
import { inRoot, serverHomeEnv } from './server-home.js'

// Where and what the host starts for a stdio MCP server. The server runs on the host, as the user,
// outside every jail, so nothing a sandbox wrote may choose the code it runs:
// - its working directory is never a session root: `npx -y <pkg>` runs a <pkg> it finds in the
//   cwd's node_modules before its cache, and a project's root is where `vis serve` is started;
// - its command, when a bare name, is looked up on PATH passing over empty, relative and in-root
//   entries (an activated venv puts <root>/.venv/bin first, npm <root>/node_modules/.bin), and the
//   child's own PATH is cleaned the same way, as npx itself finds `node` through it;
// - its HOME, where npx and uvx read their user configuration, is never in a root (server-home.ts);
// - no mcp.json env variable named like a code or configuration location names a path in a root
//   (server-env.ts: PYTHONPATH, NODE_OPTIONS, npm's PREFIX...).
// The check runs at every start: roots are opened (by this process or another) after start-up, and
// each path is judged by identity too (writablePlaces): a live jail's root renamed since it began
// (the person's `mv proj proj2`) is still written by its sandbox under its new name. One reading of
// the live-jail registry serves every path of one start.

export type StdioLaunch = { command: string; cwd: string; env: Record<string, string> }

export type LaunchConfig = {
  command: string
  env: Record<string, string>
  cwd?: string | undefined
}

// The directory stdio servers start in when mcp.json names none: in the vis home, which every jail
// masks. Its package.json stops npm's walk up to a parent's node_modules (a root holding the home).
export function defaultServerDir(home: string): string {
  const dir = join(home, 'mcp-servers')
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  try {
    writeFileSync(join(dir, 'package.json'), '{"private": true}\n', { flag: 'wx' })
  } catch {
    // already there
  }
  return dir
}

// A PATH with only the entries the host may search: absolute, and outside every writable root.
function cleanPath(value: string | undefined, places: WritablePlaces): { dirs: string[]; passed: string[] } {
  const dirs: string[] = []
  const passed: string[] = []
  for (const d of absoluteEntries((value ?? '').split(':'))) {
    const root = places.holding(d)
    if (root === undefined) dirs.push(d)
    else passed.push(d)
  }
  return { dirs, passed }
}

export function stdioLaunch(
  server: string,
  config: LaunchConfig,
  home: string,
  context: Record<string, unknown>,
): StdioLaunch {
  const denied = (what: string) => new VisError('mcp.launch-denied', what, { ...context, server })
  const places = writablePlaces()
  let cwd: string
  if (config.cwd !== undefined) {
    cwd = resolve(config.cwd)
    const root = places.holding(cwd)
    if (root !== undefined)
      throw denied(
        `MCP server ${server}: its cwd ${inRoot(cwd, root)}, which a sandbox writes; ` +
          'set "cwd" in mcp.json to a folder outside every root (or leave it out to use the vis home)',
      )
  } else {
    cwd = defaultServerDir(home)
  }
  const path = cleanPath(config.env.PATH ?? process.env.PATH, places)
  let command: string | undefined
  if (config.command.includes('/')) {
    command = resolve(cwd, config.command)
  } else {
    command = programsOn(config.command, path.dirs)[0]
    if (command === undefined) {
      const skipped =
        path.passed.length > 0 ? ` (passed over, inside a session root: ${path.passed.join(', ')})` : ''
      throw new VisError(
        'mcp.command-missing',
        `MCP server ${server}: no program ${JSON.stringify(config.command)} on PATH outside the session roots${skipped}; ` +
          'install it outside every root or give its absolute path as "command" in mcp.json',
        { ...context, server },
      )
    }
  }
  const root = places.holding(command)
  if (root !== undefined)
    throw denied(
      `MCP server ${server}: its command ${inRoot(command, root)}, which a sandbox writes; ` +
        'install the server outside every root and name it by an absolute path in mcp.json',
    )
  checkServerEnv(server, config.env, cwd, home, denied, places)
  const homeEnv = serverHomeEnv(config.env, home, places)
  return { command, cwd, env: { ...homeEnv, ...config.env, PATH: path.dirs.join(':') } }
}
