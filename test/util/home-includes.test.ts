// The HOME judgement's reading of what HOME's configuration names (seventeenth outsider pass:
// src/mcp-client/home-includes.ts, src/util/tool-home.ts): a shell start file's `.`/`source`, a git config's
// [include] path, a user-site .pth line, an ssh config's Include that names a place in a root makes
// HOME unfit, as do a link into a root inside a linked folder below a dot folder and a hard-linked
// dotfile; the same files naming places outside every root keep HOME. Real folders, files and the real
// root judgement (noteSessionRoot marks a root as a session does).
import assert from 'node:assert/strict'
import { linkSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { homeUnfit, sshUnfit } from '../../src/mcp-client/server-home.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { writablePlaces } from '../../src/util/writable-roots.js'
import { tempDir } from '../distribution/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

// A HOME with a dotfiles folder inside it (outside every root) and a session root beside it.
function layout(prefix: string): { home: string; dotfiles: string; root: string } {
  const base = realpathSync(tempDir(prefix))
  made.push(base)
  const home = join(base, 'home')
  const dotfiles = join(home, 'dotfiles')
  const root = join(base, 'root')
  for (const d of [home, dotfiles, root, join(home, '.config')]) mkdirSync(d, { recursive: true })
  noteSessionRoot(root)
  return { home, dotfiles, root }
}

const site = (home: string): string => join(home, '.local', 'lib', 'python3.11', 'site-packages')

test('dotfiles that source, include and name places outside every root keep HOME', () => {
  const { home, dotfiles } = layout('vis-home-inc-ok-')
  writeFileSync(join(dotfiles, 'bash_profile'), 'export EDITOR=vi\n')
  writeFileSync(
    join(home, '.bash_profile'),
    '# mine\n. ~/dotfiles/bash_profile\n[ -f ~/.bashrc ] && source "$HOME/.bashrc"\n',
  )
  writeFileSync(join(home, '.bashrc'), 'export PATH="$HOME/.local/bin:/usr/bin"\n')
  writeFileSync(join(dotfiles, 'gitconfig'), '[user]\n\tname = Person\n')
  writeFileSync(
    join(home, '.gitconfig'),
    '[include]\n\tpath = ~/dotfiles/gitconfig\n[includeIf "gitdir:~/w/"]\n\tpath = dotfiles/gitconfig\n',
  )
  mkdirSync(site(home), { recursive: true })
  mkdirSync(join(home, 'proj', 'src'), { recursive: true })
  writeFileSync(join(site(home), '_proj.pth'), `${join(home, 'proj', 'src')}\n`)
  mkdirSync(join(home, '.ssh'))
  mkdirSync(join(home, '.ssh', 'config.d'))
  writeFileSync(join(home, '.ssh', 'config.d', 'work'), 'Host w\n  User me\n')
  writeFileSync(join(home, '.ssh', 'config'), 'Include config.d/*\n')
  // A link to a folder inside a linked folder, and a cycle back up, read once each.
  mkdirSync(join(dotfiles, 'git', 'more'), { recursive: true })
  symlinkSync(join(dotfiles, 'git'), join(home, '.config', 'git'))
  symlinkSync(join(dotfiles, 'git'), join(dotfiles, 'git', 'more', 'up'))
  assert.equal(homeUnfit(home, writablePlaces()), undefined)
  assert.equal(sshUnfit(home, writablePlaces()), undefined)
})

test('each form naming a place in a root makes HOME unfit, and says which file named it', () => {
  const cases: [string, RegExp, (l: { home: string; dotfiles: string; root: string }) => void][] = [
    [
      '.bash_profile sourcing a root file',
      /\.bash_profile names/,
      ({ home, root }) => writeFileSync(join(home, '.bash_profile'), `if true; then . ${root}/profile; fi\n`),
    ],
    [
      'a file sourced from .bashrc sourcing a root file',
      /dotfiles\/aliases names/,
      ({ home, dotfiles, root }) => {
        writeFileSync(join(home, '.bashrc'), 'source ~/dotfiles/aliases # mine\n')
        writeFileSync(join(dotfiles, 'aliases'), `. "${root}/aliases"\n`)
      },
    ],
    [
      '.gitconfig [include] of a root file, through an included file',
      /dotfiles\/gitconfig names/,
      ({ home, dotfiles, root }) => {
        writeFileSync(join(home, '.gitconfig'), '[include]\n\tpath = dotfiles/gitconfig\n')
        writeFileSync(join(dotfiles, 'gitconfig'), `[includeIf "gitdir:/x/"] path = "${root}/gitconfig"\n`)
      },
    ],
    [
      '~/.config/git/config core.fsmonitor naming a root script',
      /git\/config names/,
      ({ home, root }) => {
        mkdirSync(join(home, '.config', 'git'))
        writeFileSync(join(home, '.config', 'git', 'config'), `[core]\n\tfsmonitor = ${root}/fsmon.sh\n`)
      },
    ],
    [
      'a user-site .pth naming a root folder',
      /_proj\.pth puts/,
      ({ home, root }) => {
        mkdirSync(site(home), { recursive: true })
        writeFileSync(join(site(home), '_proj.pth'), `${root}/src\n`)
      },
    ],
    [
      'a user-site .pth import line',
      /an import line/,
      ({ home }) => {
        mkdirSync(site(home), { recursive: true })
        writeFileSync(
          join(site(home), '__editable__.pth'),
          'import __editable___finder; __editable___finder.install()\n',
        )
      },
    ],
    [
      'an ssh config Include of a root file',
      /\.ssh\/config names/,
      ({ home, root }) => {
        mkdirSync(join(home, '.ssh'))
        writeFileSync(join(home, '.ssh', 'config'), `Include ${root}/ssh/*\n`)
      },
    ],
    [
      'a link into a root inside a linked folder below ~/.config',
      /links to/,
      ({ home, dotfiles, root }) => {
        mkdirSync(join(dotfiles, 'git'))
        symlinkSync(join(dotfiles, 'git'), join(home, '.config', 'git'))
        symlinkSync(join(root, 'gitconfig'), join(dotfiles, 'git', 'config'))
      },
    ],
    [
      'a dotfile hard-linked to a root file',
      /hard links/,
      ({ home, root }) => {
        writeFileSync(join(root, 'gitconfig'), '[user]\n')
        linkSync(join(root, 'gitconfig'), join(home, '.gitconfig'))
      },
    ],
  ]
  for (const [name, why, make] of cases) {
    const l = layout('vis-home-inc-bad-')
    make(l)
    const got = homeUnfit(l.home, writablePlaces())
    assert.ok(got !== undefined, `${name}: HOME judged fit`)
    assert.match(got, why, `${name}: ${got}`)
  }
})

test("the password database home's ssh config including a root file refuses, one outside every root does not", () => {
  const { home, root, dotfiles } = layout('vis-home-inc-ssh-')
  mkdirSync(join(home, '.ssh'))
  writeFileSync(join(dotfiles, 'ssh'), 'Host x\n')
  writeFileSync(join(home, '.ssh', 'config'), 'Include ~/dotfiles/ssh\n')
  assert.equal(sshUnfit(home, writablePlaces()), undefined)
  writeFileSync(join(dotfiles, 'ssh'), `Host x\n  ProxyCommand ${root}/proxy %h\n`)
  assert.match(sshUnfit(home, writablePlaces()) ?? '', /dotfiles\/ssh names/)
})
