// Attacks (sixteenth outsider pass; surface: src/mcp-client/server-home.ts hostHomeInRoot, server-env.ts,
// util/tool-home.ts homeInRoot). Both give a server, through mcp.json's env, a folder of the person's own
// whose dotfiles link into a session root, the way a stow-style ~/dotfiles repository is laid out.
//
// 1. env.HOME. The fifteenth pass judges the host's HOME by shape (a root at a dot place, a dotfile or
// ~/.config entry linking into a root) and gives a server the private HOME when it fails. But that judgement
// ran only for a server that inherits HOME: `hostHomeInRoot` returned early as soon as mcp.json's env had a
// HOME, and server-env.ts judged that value only as a path (is HOME itself in a root?). vis's own stderr
// note, printed when the inherited HOME fails, tells the person to "set env HOME ... to a folder outside
// every root to give it a real one"; their real home is such a folder (the root is ~/dotfiles), so following
// it handed the server the HOME whose ~/.gitconfig links into the root, and the host's git ran the block's
// core.fsmonitor. judgeRunning skipped it the same way (launch.env.HOME is set).
//
// 2. env.XDG_CONFIG_HOME. The `~/.config/*` entries are judged for links into a root (a `~/.config/git ->
// ~/dotfiles/git` link gives a server the private HOME, whose XDG_CONFIG_HOME is its own). An mcp.json
// `env.XDG_CONFIG_HOME` naming the person's real `~/.config` was judged as one path only: the folder itself
// lies in no root, so it passed, and git reads `$XDG_CONFIG_HOME/git/config`, which the link leads into the
// session's root. (GIT_CONFIG_GLOBAL naming the linked file itself is refused: its real path is read.)
//
// Reproduction: a HOME U for the engine process with the link (dangling until the block writes its target);
// session on W = U/dotfiles; a git repository outside W. Servers `inherited` (no env) and the explicit one,
// each a node process that runs `git status` in the repository. The block writes the config with
// core.fsmonitor appending the server's name and HOME to a marker outside W.
// Expected: `inherited` gets the private HOME (git never reads U's config), and the explicit one is refused
// or its git never reads the block's config; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, runEngine, type Server } from './outsider14-run.js'

const gitFound = existsSync('/usr/bin/git')

// U (the engine's HOME) with W = U/dotfiles as the root, `link` (relative to U) leading to `target`
// (relative to W), a committed repository outside W, and servers running `git status` there; the block
// writes W/`target`/.../`config` with a core.fsmonitor that appends to the marker. Returns the block's
// output and what the host ran ('' when nothing).
function plantedGitConfig(
  prefix: string,
  link: string,
  target: string,
  config: string,
  explicit: (U: string) => Record<string, string>,
): { out: string; ran: string; U: string; W: string } {
  const base = attackBase(prefix)
  const U = join(base, 'user-home')
  const W = join(U, 'dotfiles')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const repo = join(outside, 'repo')
  for (const d of [U, W, home, outside, repo]) mkdirSync(d, { recursive: true })
  mkdirSync(join(U, link, '..'), { recursive: true })
  symlinkSync(join(W, target), join(U, link))
  const quiet = { ...process.env, HOME: outside, GIT_CONFIG_NOSYSTEM: '1' }
  for (const args of [
    ['init', '-q'],
    ['-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '.'],
  ]) {
    if (args[0] !== 'init') writeFileSync(join(repo, 'a'), 'a\n')
    const r = spawnSync('/usr/bin/git', args, { cwd: repo, env: quiet, encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
  }
  const marker = join(outside, 'ran-on-the-host')
  const server = (env: Record<string, string>): Server => ({
    command: process.execPath,
    args: [
      '-e',
      `require('node:child_process').spawnSync('/usr/bin/git', ['status', '--short'], { cwd: ${JSON.stringify(repo)}, stdio: 'ignore', timeout: 5000 }); setTimeout(() => {}, 3000)`,
    ],
    env,
    timeout_ms: 6_000,
  })
  const gitconfig = `[core]\n\tfsmonitor = "echo W/${config}, written by the block, run on the host by git for the server $WHO with HOME=$HOME >> ${marker}; false"\n`
  const before = process.env.HOME
  process.env.HOME = U
  try {
    const out = runEngine(
      base,
      W,
      home,
      outside,
      { inherited: server({ WHO: 'inherited' }), explicit: server({ WHO: 'explicit', ...explicit(U) }) },
      [
        'import os',
        `W = ${JSON.stringify(W)}`,
        `os.makedirs(os.path.dirname(W + '/' + ${JSON.stringify(config)}), exist_ok=True)`,
        `open(W + '/' + ${JSON.stringify(config)}, 'w').write(${JSON.stringify(gitconfig)})`,
        "print('planted')",
        ...connectEach(['inherited', 'explicit']),
      ],
    )
    assert.match(out, /planted/, out)
    const ran = existsSync(marker)
      ? [...new Set(readFileSync(marker, 'utf8').trim().split('\n'))].join(' / ')
      : ''
    return { out, ran, U, W }
  } finally {
    process.env.HOME = before
  }
}

test("mcp.json env.HOME set to the person's home whose dotfile links into a root does not give git the block's config", () => {
  assert.ok(gitFound, 'this test needs git')
  const { out, ran, U, W } = plantedGitConfig(
    'vis-attack-mcp-home-explicit-',
    '.gitconfig',
    'gitconfig',
    'gitconfig',
    (U) => ({
      HOME: U,
    }),
  )
  assert.equal(
    ran,
    '',
    `mcp.json env.HOME=${U} (outside every root, as vis's note advises) passed the launch check although ` +
      `${U}/.gitconfig links into the session root ${W}, and the host's git ran the block's core.fsmonitor: ` +
      `${ran} (${out.slice(0, 500)})`,
  )
})

test("mcp.json env.XDG_CONFIG_HOME naming a ~/.config whose git entry links into a root does not give git the block's config", () => {
  assert.ok(gitFound, 'this test needs git')
  const { out, ran, U, W } = plantedGitConfig(
    'vis-attack-mcp-xdg-config-explicit-',
    '.config/git',
    'git',
    'git/config',
    (U) => ({
      XDG_CONFIG_HOME: join(U, '.config'),
    }),
  )
  assert.equal(
    ran,
    '',
    `mcp.json env.XDG_CONFIG_HOME=${U}/.config (outside every root) passed the launch check although ` +
      `${U}/.config/git links into the session root ${W}, and the host's git ran the block's core.fsmonitor: ` +
      `${ran} (${out.slice(0, 500)})`,
  )
})
