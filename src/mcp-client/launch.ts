import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import { VisError } from '../util/errors.js'
import { absoluteEntries, programsOn } from '../util/host-programs.js'
import { type WritablePlaces, writablePlaces } from '../util/writable-roots.js'
import { checkServerEnv } from './server-env.js'
import { hostPrivateFolder, inRoot, serverHomeEnv } from './server-home.js'

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

// The folder stdio servers start in when mcp.json names none, made in `base` (the vis home, which
// every jail masks, or the host's private folder: serverCwd). Its package.json makes it npm's local
// prefix, so npm looks for no node_modules above it.
export function defaultServerDir(base: string): string {
  const dir = join(base, 'mcp-servers')
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  try {
    writeFileSync(join(dir, 'package.json'), '{"private": true}\n', { flag: 'wx' })
  } catch {
    // already there
  }
  return dir
}

// Where a server with no cwd in mcp.json starts. npm walks up from its cwd past the first
// package.json: a parent whose package.json lists the folder among its `workspaces` becomes npm's
// local prefix, and npx then runs that prefix's node_modules/.bin before installing (thirteenth
// outsider pass: a block's ~/package.json naming .vis/mcp-servers under a session on ~). The same
// walk finds a project's .npmrc, and Node's module lookup climbs every ancestor's node_modules. So
// when the vis home lies in a root, whose sandbox writes the home's ancestors, servers start in a
// private folder of the host's temp directory instead (hostPrivateFolder: no ancestor of it is a
// sandbox's), which ends each of those walks outside every root. Otherwise <home>/mcp-servers.
function serverCwd(home: string, places: WritablePlaces): string {
  const inRootNow = places.holding(home) ?? places.holding(join(home, 'mcp-servers'))
  if (inRootNow === undefined) return defaultServerDir(home)
  return defaultServerDir(hostPrivateFolder('vis-mcp-cwd-'))
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
    cwd = serverCwd(home, places)
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
  const homeEnv = serverHomeEnv(config.env, home, places)
  const env = { ...homeEnv, ...config.env, PATH: path.dirs.join(':') }
  // The variables the server will have (the transport adds the host's HOME, USER, SHELL... under
  // ours), against which mcp.json's values are expanded as its tools expand them.
  checkServerEnv(server, config.env, cwd, home, denied, places, { ...getDefaultEnvironment(), ...env })
  return { command, cwd, env }
}
