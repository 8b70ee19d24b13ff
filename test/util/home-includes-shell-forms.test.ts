// The HOME judgement's reading of start files and git config as their programs read them (eighteenth
// outsider pass: src/mcp-client/home-includes.ts): a `\<newline>`-continued line, a pattern operand of `.`,
// a variable the file sets itself, a `for` loop's files sourced through its variable (Fedora's
// ~/.bashrc.d loop), a continued git value, a user-site .pth naming the folder holding a root, and an
// mcp.json XDG_CONFIG_HOME's git/config. Each naming a root makes HOME unfit (or the env refused); the
// same forms naming places outside every root keep it. Real folders and the real root judgement.
import assert from 'node:assert/strict'
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { explicitHomeUnfit, homeUnfit } from '../../src/mcp-client/server-home.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { writablePlaces } from '../../src/util/writable-roots.js'
import { tempDir } from '../distribution/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

// A HOME holding a dotfiles folder (outside every root) and a session root `work` beside dotfiles.
function layout(prefix: string): { base: string; home: string; dotfiles: string; root: string } {
  const base = realpathSync(tempDir(prefix))
  made.push(base)
  const home = join(base, 'home')
  const dotfiles = join(home, 'dotfiles')
  const root = join(home, 'projects', 'work')
  for (const d of [home, dotfiles, root, join(home, '.bashrc.d')]) mkdirSync(d, { recursive: true })
  writeFileSync(join(dotfiles, 'profile'), 'export EDITOR=vi\n')
  writeFileSync(join(root, 'profile'), 'export EDITOR=vi\n')
  noteSessionRoot(root)
  return { base, home, dotfiles, root }
}

const FEDORA_BASHRC =
  '# .bashrc\nif [ -d ~/.bashrc.d ]; then\n\tfor rc in ~/.bashrc.d/*; do\n\t\tif [ -f "$rc" ]; then\n\t\t\t. "$rc"\n\t\tfi\n\tdone\nfi\nunset rc\n'
const DEBIAN_BASHRC =
  '# If not running interactively, do not do anything\ncase $- in\n    *i*) ;;\n      *) return;;\nesac\nif [ -f ~/.bash_aliases ]; then\n    . ~/.bash_aliases\nfi\n'

const DEBIAN_PROFILE =
  'if [ -n "$BASH_VERSION" ]; then\n    if [ -f "$HOME/.bashrc" ]; then\n\t. "$HOME/.bashrc"\n    fi\nfi\nif [ -d "$HOME/bin" ] ; then\n    PATH="$HOME/bin:$PATH"\nfi\n'

test('start files sourcing outside every root, in every form read here, keep HOME', () => {
  const { home, dotfiles } = layout('vis-home-forms-ok-')
  writeFileSync(
    join(home, '.bash_profile'),
    '. ~/dot\\\nfiles/profile\n. ~/dotfile[s]/profile\nme=$HOME\nexport D="$me/dotfiles"\n. "$D/profile"\n[ -f ~/.bashrc ] && . ~/.bashrc\n',
  )
  writeFileSync(join(home, '.bashrc'), `${FEDORA_BASHRC}${DEBIAN_BASHRC}`)
  writeFileSync(join(home, '.profile'), DEBIAN_PROFILE)
  writeFileSync(join(home, '.bashrc.d', '50-dotfiles.sh'), '. ~/dotfiles/profile\n')
  writeFileSync(join(home, '.bash_aliases'), 'alias ll="ls -l"\n')
  writeFileSync(join(dotfiles, 'gitconfig'), '[user]\n\tname = Person\n')
  writeFileSync(join(home, '.gitconfig'), '[include]\n\tpath = ~/dot\\\nfiles/gitconfig\n')
  const site = join(home, '.local', 'lib', 'python3.11', 'site-packages')
  mkdirSync(site, { recursive: true })
  writeFileSync(join(site, 'dotfiles.pth'), `${dotfiles}\n`)
  assert.equal(homeUnfit(home, writablePlaces()), undefined)
})

test('each form leading into a root makes HOME unfit, and says why', () => {
  const cases: [string, RegExp, (l: { home: string; dotfiles: string; root: string }) => void][] = [
    [
      'a \\<newline>-continued . operand',
      /\.bash_profile names .*projects\/work\/profile/,
      ({ home }) => writeFileSync(join(home, '.bash_profile'), '. ~/projects/wo\\\nrk/profile\n'),
    ],
    [
      'a pattern operand matching a root file',
      /\.bash_profile names .*projects\/wor\[k\]\/profile, which a shell expands to/,
      ({ home }) => writeFileSync(join(home, '.bash_profile'), '. ~/projects/wor[k]/profile\n'),
    ],
    [
      "an operand built from the file's own variable",
      /\.bash_profile names .*projects\/work\/profile/,
      ({ home }) => writeFileSync(join(home, '.bash_profile'), 'p=~/projects\n. "$p/work/profile"\n'),
    ],
    [
      "a ~/.bashrc.d snippet sourced by Fedora's loop",
      /50-dotfiles\.sh names .*projects\/work/,
      ({ home }) => {
        writeFileSync(join(home, '.bashrc'), FEDORA_BASHRC)
        writeFileSync(join(home, '.bashrc.d', '50-dotfiles.sh'), '. ~/projects/work/profile\n')
      },
    ],
    [
      'an operand from a command',
      /a command's output/,
      ({ home }) => writeFileSync(join(home, '.bashrc'), '. "$(cat ~/.where)/profile"\n'),
    ],
    [
      "a loop over a command's output",
      /built from \$f, set to a value this reading cannot compute/,
      ({ home }) => writeFileSync(join(home, '.bashrc'), 'for f in $(ls ~/x); do . "$f"; done\n'),
    ],
    [
      'an operand from a variable set to what no reading computes',
      /set to a value this reading cannot compute/,
      ({ home }) => writeFileSync(join(home, '.bashrc'), 'd=$(cat ~/.where)\n. "$d/profile"\n'),
    ],
    [
      'an operand from a positional parameter',
      /whose value this reading cannot know/,
      ({ home }) => writeFileSync(join(home, '.bashrc'), 'load() { [ -f "$1" ] && . "$1"; }\n'),
    ],
    [
      'a function sourcing from a variable set below it',
      /\.bashrc names .*projects\/work\/profile/,
      ({ home }) =>
        writeFileSync(join(home, '.bashrc'), 'load() { . "$DOTS/profile"; }\nDOTS=~/projects/work\nload\n'),
    ],
    [
      'a continued git [include] path',
      /\.gitconfig names .*projects\/work\/gitconfig/,
      ({ home }) =>
        writeFileSync(join(home, '.gitconfig'), '[include]\n\tpath = ~/projects/wo\\\nrk/gitconfig\n'),
    ],
    [
      'a user-site .pth naming the folder holding a root',
      /projects\.pth puts .*projects on python's path, which holds the session root/,
      ({ home }) => {
        const site = join(home, '.local', 'lib', 'python3.11', 'site-packages')
        mkdirSync(site, { recursive: true })
        writeFileSync(join(site, 'projects.pth'), `${join(home, 'projects')}\n`)
      },
    ],
  ]
  for (const [name, why, make] of cases) {
    const l = layout('vis-home-forms-bad-')
    make(l)
    const got = homeUnfit(l.home, writablePlaces())
    assert.ok(got !== undefined, `${name}: HOME judged fit`)
    assert.match(got, why, `${name}: ${got}`)
  }
})

test("an mcp.json XDG_CONFIG_HOME whose git/config includes a root's file is refused, one outside every root is not", () => {
  const { base, dotfiles, root } = layout('vis-home-forms-xdg-')
  const config = join(base, 'config')
  mkdirSync(join(config, 'git'), { recursive: true })
  writeFileSync(join(dotfiles, 'gitconfig'), '[user]\n\tname = Person\n')
  writeFileSync(join(config, 'git', 'config'), `[include]\n\tpath = ${dotfiles}/gitconfig\n`)
  const env = { XDG_CONFIG_HOME: config }
  assert.equal(explicitHomeUnfit(env, base, writablePlaces()), undefined)
  writeFileSync(join(config, 'git', 'config'), `[include]\n\tpath = ${root}/gitconfig\n`)
  assert.match(
    explicitHomeUnfit(env, base, writablePlaces()) ?? '',
    /env\.XDG_CONFIG_HOME .*git\/config names .*work\/gitconfig/,
  )
})
