// The HOME judgement for tools the host runs (src/util/tool-home.ts homeInRoot; MCP stdio servers
// and vis's own npm), for the places a program reads as configuration beyond USER_PLACES (fifteenth
// outsider pass): every top-level dot entry of HOME, and every link below one at any depth up to the
// walk's bound (caches aside), that is, lies in or leads (through links, a dangling one too) into a
// writable root makes HOME no HOME for such a tool. Both directions: dotfiles linked to a folder
// outside every root, and a root reached by a link that is no dotfile, leave HOME as it is. Real
// folders, links and the real root judgement (noteSessionRoot marks a root as a session does).
import assert from 'node:assert/strict'
import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { homeInRoot } from '../../src/util/tool-home.js'
import { writablePlaces } from '../../src/util/writable-roots.js'
import { tempDir } from '../distribution/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})
// A HOME and, beside it, a dotfiles folder and a session root (not yet noted).
function layout(prefix: string): { home: string; dotfiles: string; root: string } {
  const base = realpathSync(tempDir(prefix))
  made.push(base)
  const home = join(base, 'home')
  const dotfiles = join(base, 'dotfiles')
  const root = join(base, 'root')
  for (const d of [home, dotfiles, root, join(home, '.config'), join(home, '.local', 'bin')])
    mkdirSync(d, { recursive: true })
  return { home, dotfiles, root }
}

test('dotfiles linked to a folder outside every root, and a non-dot link into a root, keep HOME', () => {
  const { home, dotfiles, root } = layout('vis-home-dot-ok-')
  noteSessionRoot(root)
  writeFileSync(join(dotfiles, 'gitconfig'), '[user]\n')
  mkdirSync(join(dotfiles, 'git'))
  symlinkSync(join(dotfiles, 'gitconfig'), join(home, '.gitconfig'))
  symlinkSync(join(dotfiles, 'git'), join(home, '.config', 'git'))
  // Deeper links (stow --no-folding) to the dotfiles folder, and a link loop, leave HOME fit too.
  mkdirSync(join(dotfiles, 'ssh'))
  writeFileSync(join(dotfiles, 'ssh', 'config'), '')
  mkdirSync(join(home, '.ssh'))
  symlinkSync(join(dotfiles, 'ssh', 'config'), join(home, '.ssh', 'config'))
  mkdirSync(join(home, '.local', 'share', 'app'), { recursive: true })
  symlinkSync(join(home, '.local', 'share'), join(home, '.local', 'share', 'app', 'loop'))
  writeFileSync(join(home, '.bashrc'), '')
  // A project the person links into HOME by a name no program reads as configuration.
  symlinkSync(root, join(home, 'project'))
  assert.equal(homeInRoot(home, writablePlaces()), undefined)
})

test('a dotfile, a ~/.config entry or a ~/.local/bin entry linked into a root makes HOME unfit', () => {
  const cases: [string, (l: { home: string; root: string }) => void][] = [
    ['~/.gitconfig', ({ home, root }) => symlinkSync(join(root, 'gitconfig'), join(home, '.gitconfig'))],
    [
      '~/.bash_profile (relative link)',
      ({ home }) => symlinkSync('../root/bash_profile', join(home, '.bash_profile')),
    ],
    ['~/.config/git', ({ home, root }) => symlinkSync(join(root, 'git'), join(home, '.config', 'git'))],
    [
      '~/.local/bin/tool',
      ({ home, root }) => symlinkSync(join(root, 'tool'), join(home, '.local', 'bin', 'tool')),
    ],
    // A chain of links ending in a file the root's sandbox has not made yet.
    [
      '~/.vimrc -> ~/.vimrc.real -> W/vimrc',
      ({ home, root }) => {
        symlinkSync(join(root, 'vimrc'), join(home, '.vimrc.real'))
        symlinkSync(join(home, '.vimrc.real'), join(home, '.vimrc'))
      },
    ],
    // A link to a folder that holds the root.
    [
      '~/.ssh -> a folder holding the root',
      ({ home, root }) => symlinkSync(join(root, '..'), join(home, '.ssh')),
    ],
    // Links below real folders (stow --no-folding links each file at its depth).
    [
      '~/.config/git/config, ~/.config/git a folder',
      ({ home, root }) => {
        mkdirSync(join(home, '.config', 'git'))
        symlinkSync(join(root, 'gitconfig'), join(home, '.config', 'git', 'config'))
      },
    ],
    [
      '~/.ssh/config, ~/.ssh a folder',
      ({ home, root }) => {
        mkdirSync(join(home, '.ssh'))
        symlinkSync(join(root, 'ssh_config'), join(home, '.ssh', 'config'))
      },
    ],
    [
      '~/.local/share/nvim/site/plugin/x.lua, six folders deep',
      ({ home, root }) => {
        const dir = join(home, '.local', 'share', 'nvim', 'site', 'plugin')
        mkdirSync(dir, { recursive: true })
        symlinkSync(join(root, 'x.lua'), join(dir, 'x.lua'))
      },
    ],
    [
      '~/.config -> a folder outside every root, whose git/config links into the root',
      ({ home, root }) => {
        const elsewhere = join(home, '..', 'dotfiles', 'config')
        mkdirSync(join(elsewhere, 'git'), { recursive: true })
        symlinkSync(join(root, 'gitconfig'), join(elsewhere, 'git', 'config'))
        rmSync(join(home, '.config'), { recursive: true })
        symlinkSync(elsewhere, join(home, '.config'))
      },
    ],
  ]
  for (const [what, make] of cases) {
    const l = layout('vis-home-dot-root-')
    noteSessionRoot(l.root)
    assert.equal(homeInRoot(l.home, writablePlaces()), undefined, `${what}: HOME is fit before the link`)
    make(l)
    const why = homeInRoot(l.home, writablePlaces())
    assert.ok(why !== undefined, `${what}: HOME is judged unfit`)
    assert.match(why, /session root/, why)
  }
})

test('a root opened inside any dot folder of HOME makes HOME unfit; one in a plain folder does not', () => {
  const { home } = layout('vis-home-dot-inside-')
  const plain = join(home, 'projects', 'p')
  mkdirSync(plain, { recursive: true })
  noteSessionRoot(plain)
  assert.equal(homeInRoot(home, writablePlaces()), undefined)
  const ssh = join(home, '.ssh')
  mkdirSync(ssh)
  noteSessionRoot(ssh)
  assert.match(homeInRoot(home, writablePlaces()) ?? '', /\.ssh/)
})

test('dot folders past the bound of entries make HOME unfit; the same count in a cache does not', () => {
  const { home, root } = layout('vis-home-dot-bound-')
  noteSessionRoot(root)
  const fill = (dir: string) => {
    mkdirSync(dir, { recursive: true })
    for (let i = 0; i <= 50_000; i++) writeFileSync(join(dir, `f${i}`), '')
  }
  fill(join(home, '.cache', 'pip'))
  assert.equal(homeInRoot(home, writablePlaces()), undefined)
  fill(join(home, '.local', 'share', 'mail'))
  assert.match(homeInRoot(home, writablePlaces()) ?? '', /more than 50000 entries/)
})
