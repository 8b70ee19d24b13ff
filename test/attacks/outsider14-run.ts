// Shared runner for the fourteenth outsider pass's mcp.json `env` attacks: writes the spec, runs
// fixtures/outsider14-mcp-host.ts in a child process (its own vis home) and returns the block's output.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'

const fixture = join(import.meta.dirname, 'fixtures', 'outsider14-mcp-host.ts')

// One attack file's folder (its real path: the checks compare resolved paths), removed after its tests.
export function attackBase(prefix: string): string {
  const base = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  after(() => rmSync(base, { recursive: true, force: true }))
  return base
}

// The usual places below `base`: W the session's root (a folder named `work`), the vis home, the
// folder the host runs in, and the marker file in it that a program run on the host by the block's
// plant appends to.
export function attackFolders(base: string): { W: string; home: string; outside: string; marker: string } {
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [W, home, outside]) mkdirSync(d)
  return { W, home, outside, marker: join(outside, 'ran-on-the-host') }
}

// What the host ran for the block: the marker's first line ('' when nothing landed).
export function landed(marker: string): string {
  return existsSync(marker) ? (readFileSync(marker, 'utf8').split('\n')[0] ?? '') : ''
}

export type Server = { command: string; args: string[]; env: Record<string, string>; timeout_ms: number }

// A stdio server that runs one host program at its start (its output to a pipe, at most 5 s), as a real
// server's own tools do, and then stays up long enough to be connected.
export function runsAtStart(
  program: string,
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string } = {},
): Server {
  const spawnOptions = { stdio: ['ignore', 'pipe', 'pipe'], timeout: 5000, ...options }
  return {
    command: process.execPath,
    args: [
      '-e',
      `require('node:child_process').spawnSync(${JSON.stringify(program)}, ${JSON.stringify(args)}, ${JSON.stringify(spawnOptions)}); setTimeout(() => {}, 3000)`,
    ],
    env,
    timeout_ms: 6_000,
  }
}

// A git repository at `repo` (made), initialised with HOME=`H` so the person's git config is read.
export function gitRepo(repo: string, H: string): void {
  mkdirSync(repo, { recursive: true })
  const init = spawnSync('git', ['init', '-q', repo], { encoding: 'utf8', env: { ...process.env, HOME: H } })
  assert.equal(init.status, 0, init.stderr)
}

// A stdio server that runs `git status` in `repo` at its start, as a git MCP server does at each call:
// git reads the HOME it is given, and its core.fsmonitor runs.
export function gitStatusAtStart(repo: string, env: Record<string, string> = {}): Server {
  return runsAtStart('git', ['-C', repo, 'status', '--porcelain'], env)
}

// The block's lines that write W/fsmon.sh (appends `why` to the marker outside W) and, when `config`
// is given, W/`config` as a git config whose core.fsmonitor runs it.
export function plantFsmonitor(W: string, marker: string, why: string, config?: string): string[] {
  const hook = `#!/bin/sh\necho ${JSON.stringify(why)} >> ${JSON.stringify(marker)}\nexit 1\n`
  return [
    'import os',
    `W = ${JSON.stringify(W)}`,
    `open(W + '/fsmon.sh', 'w').write(${JSON.stringify(hook)})`,
    "os.chmod(W + '/fsmon.sh', 0o755)",
    ...(config === undefined
      ? []
      : [
          `open(W + ${JSON.stringify(`/${config}`)}, 'w').write('[core]\\n\\tfsmonitor = ' + W + '/fsmon.sh\\n')`,
        ]),
  ]
}

// The block's lines that try each named server: "<name> ok ..." or "<name> refused <code> <message>".
export function connectEach(names: string[]): string[] {
  return [
    `for name in ${JSON.stringify(names)}:`,
    '    try:',
    '        print(name, "ok", await mcp_connect(name))',
    '    except Exception as e:',
    "        print(name, 'refused', getattr(e, 'code', ''), str(e)[:300])",
  ]
}

export function runEngine(
  base: string,
  W: string,
  home: string,
  outside: string,
  servers: Record<string, Server>,
  code: string[],
): string {
  const spec = join(base, 'spec.json')
  writeFileSync(spec, JSON.stringify({ servers, code: code.join('\n') }))
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, W, home, spec], {
    cwd: outside,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 240_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  return r.stdout.trim().replace(/\n/g, ' | ')
}
