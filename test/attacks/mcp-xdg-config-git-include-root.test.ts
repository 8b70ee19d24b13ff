// Attack (eighteenth outsider pass; surface: src/mcp-client/server-home.ts explicitHomeUnfit /
// hostHomeInRoot and home-includes.ts). Since the seventeenth pass what `~/.gitconfig` and
// `~/.config/git/config` NAME by their content (`[include] path = ...`) is read, and a HOME whose git
// config includes a root's file is unfit. But git reads `$XDG_CONFIG_HOME/git/config` instead of
// `~/.config/git/config` when XDG_CONFIG_HOME is set, and that file's content is never read:
// an mcp.json `env.XDG_CONFIG_HOME` (promised "judged like the inherited HOME") is judged by the folder
// and the links below it only, so a plain `git/config` there with `[include] path = W/gitconfig` passes,
// and the host's git, run by the server, read the block's config and ran its core.fsmonitor.
//
// Reproduction: a session on W; C a folder outside every root holding a plain `git/config`
// that includes W/gitconfig (a person keeping a shared git config in a project, as with ~/.gitconfig's
// include); XDG_CONFIG_HOME=C given in mcp.json. The block writes
// W/gitconfig with `core.fsmonitor = W/fsmon.sh` and connects a server that runs `git status` in a repo
// outside W. Expected: refused or private configuration; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, landed, runEngine, runsAtStart } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-xdg-git-include-')
const hostXdg = process.env.XDG_CONFIG_HOME
const hostHome = process.env.HOME
test.after(() => {
  process.env.HOME = hostHome
  if (hostXdg === undefined) delete process.env.XDG_CONFIG_HOME
  else process.env.XDG_CONFIG_HOME = hostXdg
})

function attack(name: string, explicit: boolean): void {
  const W = join(base, `work-${name}`)
  const C = join(base, `config-${name}`)
  const home = join(base, `vis-home-${name}`)
  const outside = join(base, `outside-${name}`)
  const repo = join(outside, 'repo')
  for (const d of [W, join(C, 'git'), home, outside, repo]) mkdirSync(d, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(W, 'gitconfig'), '[user]\n\tname = Person\n')
  writeFileSync(join(C, 'git', 'config'), `[include]\n\tpath = ${W}/gitconfig\n`)
  const init = spawnSync('git', ['init', '-q', repo], { encoding: 'utf8' })
  assert.equal(init.status, 0, init.stderr)
  // A clean HOME (no dotfiles), so the server is given the real one and what it inherits besides.
  const H = join(base, `home-${name}`)
  mkdirSync(H)
  process.env.HOME = H
  if (explicit) delete process.env.XDG_CONFIG_HOME
  else process.env.XDG_CONFIG_HOME = C
  const hook = `#!/bin/sh\necho "W/fsmon.sh, written by the block, run on the host by git through $XDG_CONFIG_HOME/git/config's [include] (${name})" >> ${JSON.stringify(marker)}\nexit 1\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      git: runsAtStart('git', ['-C', repo, 'status', '--porcelain'], explicit ? { XDG_CONFIG_HOME: C } : {}),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      `open(W + '/fsmon.sh', 'w').write(${JSON.stringify(hook)})`,
      "os.chmod(W + '/fsmon.sh', 0o755)",
      "open(W + '/gitconfig', 'w').write('[core]\\n\\tfsmonitor = ' + W + '/fsmon.sh\\n')",
      "print('planted')",
      ...connectEach(['git']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.equal(
    landed(marker),
    '',
    `the server started with XDG_CONFIG_HOME=${C} (${explicit ? "mcp.json's env" : "the host's own"}) although ` +
      `${C}/git/config includes the session root's ${W}/gitconfig, and the host's git ran the block's fsmonitor ` +
      `hook: ${landed(marker)} (${out.slice(0, 400)})`,
  )
}

test("an mcp.json XDG_CONFIG_HOME whose git/config includes a root's file does not configure the server's git", () => {
  attack('explicit', true)
})
// (An XDG_CONFIG_HOME the host itself runs with, with a clean HOME, was tried too and held.)
