// Attack (sixteenth outsider pass; surface: src/mcp-client/server-env.ts, util/tool-home.ts homeInRoot).
// The fifteenth pass judges the folders under HOME programs read configuration from for links into a root
// (`~/.config/*` entries among them: a `~/.config/git -> ~/dotfiles/git` link gives a server the private
// HOME, whose XDG_CONFIG_HOME is its own). An mcp.json `env.XDG_CONFIG_HOME` naming the person's real
// `~/.config` is judged by server-env.ts as one path only: the folder itself lies in no root, so it passes,
// and git reads `$XDG_CONFIG_HOME/git/config`, which the link leads into the session's root. (GIT_CONFIG_GLOBAL
// naming the linked file itself is refused: its real path is read.)
//
// Reproduction: a HOME U for the engine process with U/.config/git -> U/dotfiles/git (the link dangling
// until the block writes it); session on W = U/dotfiles; a git repository outside W. Servers `inherited` (no
// env) and `xdg` (env XDG_CONFIG_HOME=U/.config), each a node process that runs `git status` in the
// repository. The block writes W/git/config with core.fsmonitor appending the server's name to a marker.
// Expected: `xdg` is refused or its git never reads the block's config; the marker never written.
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

const base = realpathSync(mkdtempSync(join(tmpdir(), 'vis-attack-mcp-xdg-config-explicit-')))
after(() => rmSync(base, { recursive: true, force: true }))

test("mcp.json env.XDG_CONFIG_HOME naming a ~/.config whose git entry links into a root does not give git the block's config", () => {
  assert.ok(existsSync('/usr/bin/git'), 'this test needs git')
  const U = join(base, 'user-home')
  const W = join(U, 'dotfiles')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const repo = join(outside, 'repo')
  for (const d of [U, W, home, outside, repo]) mkdirSync(d, { recursive: true })
  mkdirSync(join(U, '.config'))
  symlinkSync(join(W, 'git'), join(U, '.config', 'git'))
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
  const gitconfig = `[core]\n\tfsmonitor = "echo W/git/config, written by the block, run on the host by git for the server $WHO with HOME=$HOME >> ${marker}; false"\n`
  const before = process.env.HOME
  process.env.HOME = U
  let out: string
  try {
    out = runEngine(
      base,
      W,
      home,
      outside,
      {
        inherited: server({ WHO: 'inherited' }),
        xdg: server({ WHO: 'xdg', XDG_CONFIG_HOME: join(U, '.config') }),
      },
      [
        'import os',
        `W = ${JSON.stringify(W)}`,
        "os.makedirs(W + '/git', exist_ok=True)",
        `open(W + '/git/config', 'w').write(${JSON.stringify(gitconfig)})`,
        "print('planted')",
        ...connectEach(['inherited', 'xdg']),
      ],
    )
  } finally {
    process.env.HOME = before
  }
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `mcp.json env.XDG_CONFIG_HOME=${U}/.config (outside every root) passed the launch check although ` +
      `${U}/.config/git links into the session root ${W}, and the host's git ran the block's core.fsmonitor: ` +
      `${existsSync(marker) ? [...new Set(readFileSync(marker, 'utf8').trim().split('\n'))].join(' / ') : ''} (${out.slice(0, 500)})`,
  )
})
