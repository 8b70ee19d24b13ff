import { mkdirSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import { VisError } from '../util/errors.js'
import { absoluteEntries, notedSessionRoots, programsOn } from '../util/host-programs.js'
import { liveJailsDirs } from '../util/vis-processes.js'
import { type WritablePlaces, writablePlaces } from '../util/writable-roots.js'
import { kernelReadings } from './env-spellings.js'
import { folderBases, judgeWord, MAX_BASES, refusal } from './judge-word.js'
import { checkServerEnv } from './server-env.js'
import { explicitHomeUnfit, hostHomeInRoot, hostPrivateFolder, inRoot, serverHomeEnv } from './server-home.js'
import { installInRoot } from './server-install.js'

// Where and what the host starts for a stdio MCP server. The server runs on the host, as the user,
// outside every jail, so nothing a sandbox wrote may choose the code it runs:
// - its working directory is never a session root: `npx -y <pkg>` runs a <pkg> it finds in the
//   cwd's node_modules before its cache, and a project's root is where `vis serve` is started;
// - its command, when a bare name, is looked up on PATH passing over empty, relative and in-root
//   entries (an activated venv puts <root>/.venv/bin first, npm <root>/node_modules/.bin), and the
//   child's own PATH is cleaned the same way, as npx itself finds `node` through it;
// - its HOME, where npx and uvx read their user configuration, is never in a root (server-home.ts);
// - no mcp.json env variable, whatever its name, names a path in a root by any reading of its value
//   (server-env.ts: PYTHONPATH, NODE_OPTIONS, npm's PREFIX, BASH_FUNC_x%%, PGSSLKEY, VIM...);
// - no argument names a path in a root (checkArgs): an interpreter runs the file its args name.
// The check runs at every start: roots are opened (by this process or another) after start-up, and
// each path is judged by identity too (writablePlaces): a live jail's root renamed since it began
// (the person's `mv proj proj2`) is still written by its sandbox under its new name. One reading of
// the live-jail registry serves every path of one start.

export type StdioLaunch = { command: string; cwd: string; env: Record<string, string> }

export type LaunchConfig = {
  command: string
  args?: readonly string[] | undefined
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

// The root a PATH entry reaches, if any, read as the kernel resolves it (env-spellings.ts
// kernelReadings): `<base>/./work/tools/../../bin` is <base>/bin by text, but W/tools is the sandbox's to
// make a link (to W/a/b) and the kernel follows it before each `..`, landing in W/bin (sixteenth
// outsider pass). Each folder a `..` climbs out of is a reading, so such an entry through a root is
// passed over whether or not the link exists yet.
function entryRoot(entry: string, places: WritablePlaces): [string, string] | undefined {
  for (const place of kernelReadings('/', entry)) {
    const root = places.holding(place)
    if (root !== undefined) return [place, root]
  }
  return undefined
}

// A PATH with only the entries the host may search: absolute, and outside every writable root.
function cleanPath(value: string | undefined, places: WritablePlaces): { dirs: string[]; passed: string[] } {
  const dirs: string[] = []
  const passed: string[] = []
  for (const d of absoluteEntries((value ?? '').split(':'))) {
    if (entryRoot(d, places) === undefined) dirs.push(d)
    else passed.push(d)
  }
  return { dirs, passed }
}

// Throws `refuse(why)` for the first argument that names a place in a writable root, by any reading
// of it (env-spellings.ts: the whole word, an option's attached value `--require=W/x` or `-IW/lib`,
// `@argfile`, `file:` URLs, `~` and `$NAME` as a shell given the args would expand them, `..` as the
// kernel resolves it). The command judged above is often an interpreter, and the code it runs is named
// in its args: `node W/mcp/server.js`, `python3 W/tools/server.py`, `node --require W/hook.js`, the
// same path refused when it comes through NODE_OPTIONS (fifteenth outsider pass), and a server started
// from a folder in a root runs what that root's sandbox wrote. No rule can tell a data argument from
// code (`node W` runs W/index.js, `python3 W` its __main__.py), so every argument is judged: a folder
// for a server to serve lies outside every root, or is reached through the session's own tools.
// Since the sixteenth outsider pass each argument goes through the same judgement as an env value
// (judge-word.ts: shell patterns, `~user`, `$(...)` and forms this check cannot compute are refused
// here too, and clustered switches `-wI<W>/lib` are read), and a relative argument is read against
// every folder the args name as well as the cwd (folderBases: `bash -c "cd <W's parent> && . W/x"`),
// and, since the eighteenth outsider pass, against HOME after a bare `cd` and every folder mcp.json's
// `env` values name (`env`: `PYTHONPATH=$HOME` with `-m work.tool` imports ~/work/tool.py).
// `vars` is the environment the server gets, for the `~` and `$NAME` readings; `home` the vis home.
function checkArgs(
  server: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string,
  home: string,
  vars: Record<string, string | undefined>,
  places: WritablePlaces,
  refuse: (why: string) => Error,
): void {
  if (args.length === 0) return
  const bases = folderBases(args, cwd, vars, env)
  if (bases === undefined)
    throw refuse(
      `MCP server ${server}: its args and env name more than ${MAX_BASES} folders, against each of which a relative ` +
        'argument may be read (a program the args start may change to any of them first), too many to judge; ' +
        'start the server from a script outside every root',
    )
  for (const [i, arg] of args.entries()) {
    const verdict = judgeWord(arg, bases, home, places, vars)
    if (verdict !== undefined)
      throw refuse(
        refusal(
          server,
          `args[${i}] ${JSON.stringify(arg)}`,
          'names ',
          'that argument',
          verdict,
          'a program the host runs loads the code or configuration its arguments name ' +
            '(a script, --require, -I, @argfile, a file a `bash -c` sources, a relative path after `cd`)',
          'install the server and what its arguments name outside every root, or close the session on that ' +
            'root first',
        ),
      )
  }
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
  const vars = { ...getDefaultEnvironment(), ...env }
  checkServerEnv(server, config.env, cwd, home, denied, places, vars)
  // After the env's own judgement, which names an env.HOME lying in a root as such.
  const unfit = explicitHomeUnfit(config.env, cwd, places)
  if (unfit !== undefined) throw denied(`MCP server ${server}: ${unfit}`)
  checkArgs(server, config.args ?? [], config.env, cwd, home, vars, places, denied)
  checkInstall(server, command, config.args ?? [], cwd, vars, places, denied)
  return { command, cwd, env }
}

// Throws `refuse(why)` when what the server's own install loads leads into a root (server-install.ts:
// its python's `.pth` files, a `.git` file of a worktree, links in `node_modules`; eighteenth outsider pass).
function checkInstall(
  server: string,
  command: string,
  args: readonly string[],
  cwd: string,
  vars: Record<string, string | undefined>,
  places: WritablePlaces,
  refuse: (why: string) => Error,
): void {
  const why = installInRoot(command, args, cwd, vars, places)
  if (why !== undefined)
    throw refuse(
      `MCP server ${server}: its install leads into a session root: ${why}, which a sandbox writes, and the ` +
        "server loads it (python imports what a .pth names, git reads a worktree's repository, Node requires " +
        'what node_modules links); install the server and what it loads outside every root, or close the ' +
        'session on that root first',
    )
}

// Judges a running stdio server again, against the places sandboxes write NOW: a server lives for its
// session's life while roots keep opening (another session of this process or of any vis process of
// the user), and Python, Node and perl load modules on demand, so a place that lay outside every root
// at the start and lies in one now is a sandbox's to fill before the server's next import (fourteenth
// outsider pass: S2 opened a root on a running server's PYTHONPATH, and S1's next call imported the
// module S2's block wrote). Throws mcp.launch-denied, naming what lies in which root; the caller
// stops the server. Its cwd, command, PATH, HOME, every env location and every argument are judged as
// at the start, and a server that inherited the host's HOME is stopped when a start now would give it
// the private one (a root opened since at ~/.config or on the folder its dotfiles link into: fifteenth
// outsider pass), so its next start gets that HOME.
function judgeRunning(
  server: string,
  config: LaunchConfig,
  launch: StdioLaunch,
  home: string,
  context: Record<string, unknown>,
): void {
  const denied = (what: string) =>
    new VisError(
      'mcp.launch-denied',
      `${what}. It was started before that root was opened, and has been stopped`,
      { ...context, server },
    )
  const places = writablePlaces()
  if (places.roots.length === 0) return
  // The variables the server has: the transport's defaults (the host's HOME) under ours.
  const vars = { ...getDefaultEnvironment(), ...launch.env }
  const own: [string, string | undefined][] = [
    ['cwd', launch.cwd],
    ['command', launch.command],
    ['HOME', vars.HOME],
  ]
  // A PATH entry is read as the kernel resolves it, as cleanPath reads it at the start.
  for (const d of (launch.env.PATH ?? '').split(':')) {
    const reached = d === '' ? undefined : entryRoot(d, places)
    if (reached !== undefined)
      throw denied(
        `MCP server ${server}: its PATH entry ${reached[0] === d ? '' : `${d}, as the kernel reads it, `}` +
          `${inRoot(reached[0], reached[1])}, which a sandbox ` +
          'writes; keep the server and what it runs outside every root, or close the session on that root first',
      )
  }
  for (const [what, place] of own) {
    if (place === undefined || place === '') continue
    const root = places.holding(place)
    if (root !== undefined)
      throw denied(
        `MCP server ${server}: its ${what} ${inRoot(place, root)}, which a sandbox writes; ` +
          'keep the server and what it runs outside every root, or close the session on that root first',
      )
  }
  // launch.env has a HOME when the start gave one (the private HOME, or mcp.json's); otherwise the
  // server has the host's, judged as serverHomeEnv judges it at a start.
  if (launch.env.HOME === undefined) {
    const why = hostHomeInRoot(config.env, places)
    if (why !== undefined)
      throw denied(
        `MCP server ${server}: its HOME ${vars.HOME ?? ''} is the host's, and ${why}, which a sandbox writes ` +
          '(git, shells, npx, uvx and pip read their configuration there); its next start gets a private HOME',
      )
  }
  checkServerEnv(server, config.env, launch.cwd, home, denied, places, vars)
  const unfit = explicitHomeUnfit(config.env, launch.cwd, places)
  if (unfit !== undefined) throw denied(`MCP server ${server}: ${unfit}`)
  checkArgs(server, config.args ?? [], config.env, launch.cwd, home, vars, places, denied)
  checkInstall(server, launch.command, config.args ?? [], launch.cwd, vars, places, denied)
}

// Modification times closer to now than this may still change within the same clock tick (the
// filesystem's timestamps are coarse), so a stamp that recent is not trusted (as git treats a racy index).
const SETTLED_NS = 100_000_000n

// What the writable places depend on, read in a few µs: the modification time of each live-jail
// registry folder (an entry added, settled or removed renames a file in it) and how many roots this
// process's sessions opened; undefined while a folder changed too recently to tell a later change apart.
// `dirs` is liveJailsDirs() of the last full judgement: it asks the password database (~100 µs).
function placesStamp(dirs: readonly string[]): string | undefined {
  const now = BigInt(Date.now()) * 1_000_000n
  const parts: string[] = [String(notedSessionRoots().length), ...dirs]
  for (const dir of dirs) {
    const st = statSync(dir, { bigint: true, throwIfNoEntry: false })
    if (st === undefined) {
      parts.push('-')
      continue
    }
    if (now - st.mtimeNs < SETTLED_NS) return undefined
    parts.push(`${st.dev}:${st.ino}:${st.mtimeNs}`)
  }
  return parts.join(' ')
}

// A judge for one running server (judgeRunning) for its caller to run before each call. Reading the
// live-jail registry and every place's identity chain takes milliseconds with many jails live, so a
// judgement is made again only when the places may have changed since the last one that passed
// (placesStamp); otherwise a call costs one stat per registry folder (measured: a few µs).
export function runningJudge(
  server: string,
  config: LaunchConfig,
  launch: StdioLaunch,
  home: string,
  context: Record<string, unknown>,
): () => void {
  let passed: string | undefined
  let dirs: string[] = []
  return () => {
    if (passed !== undefined && placesStamp(dirs) === passed) return
    dirs = liveJailsDirs()
    // Taken before the judgement: a change while it reads makes the next call judge again.
    const stamp = placesStamp(dirs)
    judgeRunning(server, config, launch, home, context)
    passed = stamp
  }
}
