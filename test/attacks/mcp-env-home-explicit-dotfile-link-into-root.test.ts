// Attack (sixteenth outsider pass; surface: src/mcp-client/server-home.ts hostHomeInRoot, server-env.ts).
// The fifteenth pass judges the host's HOME by shape (util/tool-home.ts homeInRoot: a root at a dot place,
// a dotfile or ~/.config entry linking into a root) and gives a server the private HOME when it fails. But
// that judgement runs only for a server that inherits HOME: `hostHomeInRoot` returns early as soon as
// mcp.json's env has a HOME, and server-env.ts judges that value only as a path (is HOME itself in a root?).
// vis's own stderr note, printed when the inherited HOME fails, tells the person to "set env HOME ... to a
// folder outside every root to give it a real one"; their real home is such a folder (the root is
// ~/dotfiles), so following it hands the server the HOME whose ~/.gitconfig links into the root, and the
// host's git runs the block's core.fsmonitor. judgeRunning skips it the same way (launch.env.HOME is set).
//
// Reproduction: a HOME U for the engine process with U/.gitconfig -> U/dotfiles/gitconfig (stow's layout,
// the link dangling until the block writes it); session on W = U/dotfiles; a git repository outside W.
// Servers `inherited` (no env) and `explicit` (env HOME=U), each a node process that runs `git status` in
// the repository. The block writes W/gitconfig with core.fsmonitor appending $HOME to a marker outside W.
// Expected: `inherited` gets the private HOME (git never reads U/.gitconfig), and `explicit` is refused or
// gets a HOME whose dotfiles no sandbox writes; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { connectEach, runEngine, type Server } from './outsider14-run.js'

const base = realpathSync(mkdtempSync(join(tmpdir(), 'vis-attack-mcp-home-explicit-')))
after(() => rmSync(base, { recursive: true, force: true }))

test("mcp.json env.HOME set to the person's home whose dotfile links into a root does not give git the block's config", () => {
  assert.ok(existsSync('/usr/bin/git'), 'this test needs git')
  const U = join(base, 'user-home')
  const W = join(U, 'dotfiles')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const repo = join(outside, 'repo')
  for (const d of [U, W, home, outside, repo]) mkdirSync(d, { recursive: true })
  symlinkSync(join(W, 'gitconfig'), join(U, '.gitconfig'))
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
  const gitconfig = `[core]\n\tfsmonitor = "echo W/gitconfig, written by the block, run on the host by git for the server $WHO with HOME=$HOME >> ${marker}; false"\n`
  const before = process.env.HOME
  process.env.HOME = U
  let out: string
  try {
    out = runEngine(
      base,
      W,
      home,
      outside,
      { inherited: server({ WHO: 'inherited' }), explicit: server({ WHO: 'explicit', HOME: U }) },
      [
        'import os',
        `W = ${JSON.stringify(W)}`,
        `open(W + '/gitconfig', 'w').write(${JSON.stringify(gitconfig)})`,
        "print('planted')",
        ...connectEach(['inherited', 'explicit']),
      ],
    )
  } finally {
    process.env.HOME = before
  }
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `mcp.json env.HOME=${U} (outside every root, as vis's note advises) passed the launch check although ` +
      `${U}/.gitconfig links into the session root ${W}, and the host's git ran the block's core.fsmonitor: ` +
      `${existsSync(marker) ? [...new Set(readFileSync(marker, 'utf8').trim().split('\n'))].join(' / ') : ''} (${out.slice(0, 500)})`,
  )
})
