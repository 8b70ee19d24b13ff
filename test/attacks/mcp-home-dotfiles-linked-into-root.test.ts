// Attack (fifteenth outsider pass; surface: the HOME a stdio server gets, src/util/tool-home.ts homeInRoot).
// A server gets a private HOME when HOME, or one of USER_PLACES under it (.npmrc, .npm, .config, .local,
// .cache, .pip, .pydistutils.cfg), is or holds a root. Git's user configuration is ~/.gitconfig, which is
// not among them; and dotfiles kept in a folder and linked into HOME (GNU stow, chezmoi's symlink mode,
// yadm: ~/.gitconfig -> ~/dotfiles/gitconfig) are how many people keep it. With a session rooted at that
// dotfiles folder, the block rewrites the file ~/.gitconfig leads to, and every git the host's servers run
// (a git MCP server's status/log/diff, npx or pip fetching a git dependency) reads it: `core.fsmonitor`,
// `core.sshCommand`, `core.pager`, `diff.external` and aliases are programs git runs, unconfined. The same
// file named in mcp.json as GIT_CONFIG_GLOBAL is refused. Also (tests 2 and 3) ~/.config/git linked into the
// root (stow's folder link: homeInRoot asks only whether ~/.config is or holds a root) and ~/.bash_profile
// (sourced by the login shell mcp.json guides start servers through, `bash -lc`).
//
// Reproduction: HOME=H, H/.gitconfig a link to H/dotfiles/gitconfig (the person's), a session on
// W=H/dotfiles; a repository outside W; servers `control` (env GIT_CONFIG_GLOBAL=W/gitconfig) and `git`
// (no env), each a node process that runs `git -C <repo> status` at start as a git server does per call.
// The block writes W/gitconfig (core.fsmonitor = W/fsmon.sh) and W/fsmon.sh (appends to a marker outside
// W), and connects both. Expected: `control` refused, `git` started with a HOME no sandbox writes; the
// marker never written.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import {
  connectEach,
  gitRepo,
  gitStatusAtStart,
  landed,
  plantFsmonitor,
  runEngine,
} from './outsider14-run.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-gitconfig-'))
const hostHome = process.env.HOME
after(() => {
  process.env.HOME = hostHome
  rmSync(base, { recursive: true, force: true })
})

test('a ~/.gitconfig linked into a root does not configure the git a stdio server runs', () => {
  const H = join(base, 'home')
  const W = join(H, 'dotfiles')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const repo = join(outside, 'repo')
  for (const d of [H, W, home, outside, repo]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  // The person's dotfiles, stow-style: the real file in the folder, a link in HOME.
  writeFileSync(join(W, 'gitconfig'), '[user]\n\tname = Person\n\temail = person@example.invalid\n')
  symlinkSync(join(W, 'gitconfig'), join(H, '.gitconfig'))
  gitRepo(repo, H)
  // The engine (and the servers it starts) run with HOME=H.
  process.env.HOME = H
  const out = runEngine(
    base,
    W,
    home,
    outside,
    { control: gitStatusAtStart(repo, { GIT_CONFIG_GLOBAL: `${W}/gitconfig` }), git: gitStatusAtStart(repo) },
    [
      ...plantFsmonitor(
        W,
        marker,
        'W/fsmon.sh, written by the block, run on the host by git through ~/.gitconfig (a link into the root)',
        'gitconfig',
      ),
      "print('planted')",
      ...connectEach(['control', 'git']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `GIT_CONFIG_GLOBAL=W/gitconfig is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `the server got HOME=${H} although its .gitconfig leads into the session root ${W} (USER_PLACES has no ` +
      `.gitconfig), and the host's git ran the block's fsmonitor hook: ` +
      `${landed(marker)} (${out.slice(0, 500)})`,
  )
})

// The same with the folder stow links when ~/.config already exists: ~/.config/git -> ~/dotfiles/git
// (homeInRoot asks whether a root holds ~/.config or lies inside it, not whether something inside
// ~/.config leads into one).
test('a ~/.config/git linked into a root does not configure the git a stdio server runs', () => {
  const H = join(base, 'home2')
  const W = join(H, 'dotfiles')
  const home = join(base, 'vis-home2')
  const outside = join(base, 'outside2')
  const repo = join(outside, 'repo')
  for (const d of [H, W, join(W, 'git'), join(H, '.config'), home, outside, repo]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(W, 'git', 'config'), '[user]\n\tname = Person\n')
  symlinkSync(join(W, 'git'), join(H, '.config', 'git'))
  gitRepo(repo, H)
  process.env.HOME = H
  delete process.env.XDG_CONFIG_HOME
  const out = runEngine(base, W, home, outside, { git: gitStatusAtStart(repo) }, [
    ...plantFsmonitor(
      W,
      marker,
      'W/fsmon.sh, written by the block, run on the host by git through ~/.config/git (a link into the root)',
      'git/config',
    ),
    "print('planted')",
    ...connectEach(['git']),
  ])
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `the server got HOME=${H} although its .config/git leads into the session root ${W}, and the host's git ` +
      `ran the block's fsmonitor hook: ${landed(marker)} ` +
      `(${out.slice(0, 400)})`,
  )
})

// The shell's own dotfiles: mcp.json guides start servers through a login shell to get the person's PATH
// (`"command": "bash", "args": ["-lc", "npx -y ..."]`, for nvm), and bash -l sources ~/.bash_profile,
// the first file a dotfiles folder links into HOME.
test('a ~/.bash_profile linked into a root is not sourced by a server started through bash -l', () => {
  const H = join(base, 'home3')
  const W = join(H, 'dotfiles')
  const home = join(base, 'vis-home3')
  const outside = join(base, 'outside3')
  for (const d of [H, W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(W, 'bash_profile'), 'export EDITOR=vi\n')
  symlinkSync(join(W, 'bash_profile'), join(H, '.bash_profile'))
  process.env.HOME = H
  const profile = `echo "W/bash_profile, written by the block, sourced on the host by the server's login shell" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    { shell: { command: '/bin/bash', args: ['-lc', 'sleep 3'], env: {}, timeout_ms: 6_000 } },
    [
      `W = ${JSON.stringify(W)}`,
      `open(W + '/bash_profile', 'w').write(${JSON.stringify(profile)})`,
      "print('planted')",
      ...connectEach(['shell']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `the server got HOME=${H} although its .bash_profile leads into the session root ${W}, and the host's ` +
      `bash -l sourced the block's profile: ${landed(marker)} ` +
      `(${out.slice(0, 400)})`,
  )
})
