// Attack (seventeenth outsider pass; surface: the HOME a stdio server gets, src/util/tool-home.ts
// homeInRoot / configPlaceInRoot). Since the fifteenth pass a HOME whose dotfiles are, lie in or LINK
// into a root is unfit and the server gets a private HOME. But the walk reads only links: a dotfile that
// is a plain file naming a file in a root by its CONTENT is not read. That is the other way dotfiles are
// kept in a folder, as common as stow's links: `~/.bash_profile` holding `. ~/dotfiles/bash_profile`
// (or `source ~/dotfiles/aliases`), `~/.gitconfig` holding `[include] path = ~/dotfiles/gitconfig` (git's
// own documented way to share a config; `includeIf` the same). With a session rooted at ~/dotfiles, the
// block rewrites the included file and the host's `bash -l` sources it, the host's git runs its
// core.fsmonitor: the same code the link form ran, with the same file in the same root. A third test:
// a user-site `.pth` (an editable install, `pip install --user -e ~/proj`) naming the root's src.
//
// Reproduction (each test): HOME=H, a session on W=H/dotfiles; H/.bash_profile (resp. H/.gitconfig) a
// plain file that sources (includes) a file in W. The block rewrites that file and connects a server
// that runs `bash -lc` (resp. `git status` in a repository outside W). Expected: the server gets a
// private HOME (or is refused); the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { connectEach, gitRepo, gitStatusAtStart, plantFsmonitor, runEngine } from './outsider14-run.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-dotfile-include-'))
const hostHome = process.env.HOME
after(() => {
  process.env.HOME = hostHome
  rmSync(base, { recursive: true, force: true })
})

test('a ~/.bash_profile (a plain file) that sources a file in a root is not sourced by a server through bash -l', () => {
  const H = join(base, 'home')
  const W = join(H, 'dotfiles')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [H, W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  // The person's dotfiles, kept in a folder and sourced from HOME (no link anywhere).
  writeFileSync(join(W, 'bash_profile'), 'export EDITOR=vi\n')
  writeFileSync(
    join(H, '.bash_profile'),
    '# my real profile lives in ~/dotfiles\n. ~/dotfiles/bash_profile\n',
  )
  process.env.HOME = H
  const profile = `echo "W/bash_profile, written by the block, sourced on the host by the server's login shell through ~/.bash_profile's '. ~/dotfiles/bash_profile'" >> ${JSON.stringify(marker)}\n`
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
    `the server got HOME=${H} although its .bash_profile sources a file in the session root ${W} (the HOME walk ` +
      `reads links only, not what a dotfile names), and the host's bash -l sourced the block's profile: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 400)})`,
  )
})

test("a ~/.gitconfig (a plain file) whose [include] names a file in a root does not configure the server's git", () => {
  const H = join(base, 'home2')
  const W = join(H, 'dotfiles')
  const home = join(base, 'vis-home2')
  const outside = join(base, 'outside2')
  const repo = join(outside, 'repo')
  for (const d of [H, W, home, outside, repo]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(W, 'gitconfig'), '[user]\n\tname = Person\n\temail = person@example.invalid\n')
  writeFileSync(join(H, '.gitconfig'), '[include]\n\tpath = ~/dotfiles/gitconfig\n')
  gitRepo(repo, H)
  process.env.HOME = H
  const out = runEngine(base, W, home, outside, { git: gitStatusAtStart(repo) }, [
    ...plantFsmonitor(
      W,
      marker,
      "W/fsmon.sh, written by the block, run on the host by git through ~/.gitconfig's [include] of W/gitconfig",
      'gitconfig',
    ),
    "print('planted')",
    ...connectEach(['git']),
  ])
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `the server got HOME=${H} although its .gitconfig includes a file in the session root ${W} (the HOME walk ` +
      `reads links only), and the host's git ran the block's fsmonitor hook: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 400)})`,
  )
})

// Python's user site: `pip install --user -e ~/proj` (and hatchling's, uv's and setuptools' compat editable
// installs) writes ~/.local/lib/pythonX.Y/site-packages/_proj.pth holding the project's source folder, and
// every python the server runs puts it on sys.path at start-up. The .pth is a plain file; the walk reads
// no content, so a HOME whose user site names a root is fit, and the server imports the block's module.
test("a user-site .pth (an editable install) naming a folder in a root does not reach the server's python", () => {
  const H = join(base, 'home3')
  const W = join(H, 'proj')
  const home = join(base, 'vis-home3')
  const outside = join(base, 'outside3')
  const probe = spawnSync('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {
    encoding: 'utf8',
  })
  assert.equal(probe.status, 0, 'this test needs python3')
  const site = join(H, '.local', 'lib', `python${probe.stdout.trim()}`, 'site-packages')
  for (const d of [H, W, join(W, 'src'), home, outside]) mkdirSync(d, { recursive: true })
  mkdirSync(site, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(site, '_proj.pth'), `${W}/src\n`)
  process.env.HOME = H
  const module = `open(${JSON.stringify(marker)}, 'a').write("W/src/proj_tools.py, written by the block, imported on the host through the user site's _proj.pth\\n")\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      py: {
        command: 'python3',
        args: [
          '-c',
          'import time\ntry:\n    import proj_tools\nexcept ImportError:\n    pass\ntime.sleep(3)',
        ],
        env: {},
        timeout_ms: 6_000,
      },
    },
    [
      `W = ${JSON.stringify(W)}`,
      `open(W + '/src/proj_tools.py', 'w').write(${JSON.stringify(module)})`,
      "print('planted')",
      ...connectEach(['py']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `the server got HOME=${H} although its user site's _proj.pth names the session root's ${W}/src (the HOME ` +
      `walk reads links only), and the host's python imported the block's module: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 400)})`,
  )
})
