// Attack (seventeenth outsider pass; surface: the HOME walk, src/util/tool-home.ts linkBelow). The walk
// reads links below HOME's dot folders at any depth, but it descends into a link to a folder only at the
// top (`~/.config -> ~/dotfiles/config`); a link to a folder deeper down (`~/.config/git ->
// ~/dotfiles/git`, GNU stow's folded package) is judged by where it leads and not read inside. A file
// link in that folder leading into a root (`~/dotfiles/git/config -> ~/work/gitconfig`, a stow package
// that itself links to a file kept in another repository, a shared team config) is never seen, and git
// reads ~/.config/git/config through both links: the root's file.
//
// Reproduction: HOME=H, H/.config/git a link to H/dotfiles/git (outside every root), and in it `config` a
// link to W/gitconfig; a session on W=H/work; a repository outside W; a server that runs `git status`
// there at start. The block rewrites W/gitconfig (core.fsmonitor = W/fsmon.sh) and connects the server.
// Expected: the server gets a private HOME (or is refused); the marker never written.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { connectEach, gitRepo, gitStatusAtStart, plantFsmonitor, runEngine } from './outsider14-run.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-home-link-through-link-'))
const hostHome = process.env.HOME
after(() => {
  process.env.HOME = hostHome
  rmSync(base, { recursive: true, force: true })
})

test("a link into a root inside a linked folder below ~/.config does not configure the server's git", () => {
  const H = join(base, 'home')
  const W = join(H, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const repo = join(outside, 'repo')
  const dotGit = join(H, 'dotfiles', 'git')
  for (const d of [H, W, join(H, '.config'), dotGit, home, outside, repo]) mkdirSync(d, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(W, 'gitconfig'), '[user]\n\tname = Person\n')
  symlinkSync(dotGit, join(H, '.config', 'git'))
  symlinkSync(join(W, 'gitconfig'), join(dotGit, 'config'))
  gitRepo(repo, H)
  process.env.HOME = H
  delete process.env.XDG_CONFIG_HOME
  const out = runEngine(base, W, home, outside, { git: gitStatusAtStart(repo) }, [
    ...plantFsmonitor(
      W,
      marker,
      'W/fsmon.sh, written by the block, run on the host by git through ~/.config/git (a link) /config (a link into the root)',
      'gitconfig',
    ),
    "print('planted')",
    ...connectEach(['git']),
  ])
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `the server got HOME=${H} although ~/.config/git (a link to a folder) holds a link into the session root ` +
      `${W} (the walk descends into a folder link only at the top), and the host's git ran the block's ` +
      `fsmonitor hook: ${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 400)})`,
  )
})
