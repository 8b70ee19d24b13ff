// Attack (eighteenth outsider pass; surface: src/mcp-client/home-includes.ts, the reading of what HOME's
// start files and git config NAME). Since the seventeenth pass a dotfile whose text names a place in a
// root makes HOME unfit. But the reader splits each file into lines and judges each line's words on
// their own, while the programs that read those files do not:
//  1. a shell joins `\`+newline before it reads a word (`. ~/dot\` / `files/bash_profile` sources
//     ~/dotfiles/bash_profile), and the reader judged `~/dot\` and `files/bash_profile` (under HOME);
//  2. a shell globs the word after `.` (`. ~/dotfile[s]/bash_profile`), and the reader judged the
//     pattern as a literal path, which names no root (the env/args judgement expands patterns over the
//     host's folders, judge-word.ts; this reader does not);
//  3. a variable the start file sets itself (`me=$HOME` then `. "$me/dotfiles/bash_profile"`) was read
//     as empty and as written, never with the value the same file gives it (SECURITY.md leaves out only
//     "a variable whose value is set outside the file read");
//  4. git joins a value's `\`+newline too (`path = ~/dot\` / `files/gitconfig`), and a continued line
//     holds no `=`, so the reader skipped it.
// Each time the server got the real HOME and the host ran the block's file.
//
// Reproduction (each test): HOME=H, a session on W=H/dotfiles; a plain dotfile in H naming a file in W
// in one of the forms above. The block rewrites that file and connects a server that runs `bash -lc`
// (resp. `git status` in a repository outside W). Expected: the server gets a private HOME (or is
// refused); the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, landed, runEngine } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-dotfile-split-')
const hostHome = process.env.HOME
test.after(() => {
  process.env.HOME = hostHome
})

function bashProfileSources(name: string, profileText: string): void {
  const H = join(base, `home-${name}`)
  const W = join(H, 'dotfiles')
  const home = join(base, `vis-home-${name}`)
  const outside = join(base, `outside-${name}`)
  for (const d of [H, W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(W, 'bash_profile'), 'export EDITOR=vi\n')
  writeFileSync(join(H, '.bash_profile'), profileText)
  process.env.HOME = H
  const profile = `echo "W/bash_profile, written by the block, sourced on the host by the server's login shell (${name})" >> ${JSON.stringify(marker)}\n`
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
  assert.equal(
    landed(marker),
    '',
    `the server got HOME=${H} although its .bash_profile sources ${W}/bash_profile (${JSON.stringify(profileText)}), ` +
      `and the host's bash -l sourced the block's profile: ${landed(marker)} (${out.slice(0, 400)})`,
  )
}

test("a ~/.bash_profile line continued with \\<newline> into a root's file is read joined, as bash reads it", () => {
  bashProfileSources('continued', '# my real profile lives in ~/dotfiles\n. ~/dot\\\nfiles/bash_profile\n')
})

test("a ~/.bash_profile sourcing a glob that matches a root's file is read expanded, as bash reads it", () => {
  bashProfileSources('glob', '# my real profile lives in ~/dotfiles\n. ~/dotfile[s]/bash_profile\n')
})

test('a ~/.bash_profile sourcing a path built from a variable it sets itself is read with that value, as bash reads it', () => {
  bashProfileSources(
    'own-variable',
    '# my real profile lives in ~/dotfiles\nme=$HOME\n. "$me/dotfiles/bash_profile"\n',
  )
})

test("a ~/.gitconfig [include] path continued with \\<newline> into a root's file does not configure the server's git", () => {
  const H = join(base, 'home-git')
  const W = join(H, 'dotfiles')
  const home = join(base, 'vis-home-git')
  const outside = join(base, 'outside-git')
  const repo = join(outside, 'repo')
  for (const d of [H, W, home, outside, repo]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(W, 'gitconfig'), '[user]\n\tname = Person\n\temail = person@example.invalid\n')
  writeFileSync(join(H, '.gitconfig'), '[include]\n\tpath = ~/dot\\\nfiles/gitconfig\n')
  const init = spawnSync('git', ['init', '-q', repo], { encoding: 'utf8', env: { ...process.env, HOME: H } })
  assert.equal(init.status, 0, init.stderr)
  // git itself reads the continued value as ~/dotfiles/gitconfig.
  const seen = spawnSync('git', ['config', '--includes', '--global', 'user.name'], {
    encoding: 'utf8',
    env: { ...process.env, HOME: H },
  })
  assert.equal(seen.stdout.trim(), 'Person', 'git joins the continued include path')
  process.env.HOME = H
  const hook = `#!/bin/sh\necho "W/fsmon.sh, written by the block, run on the host by git through ~/.gitconfig's continued [include] path" >> ${JSON.stringify(marker)}\nexit 1\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      git: {
        command: process.execPath,
        args: [
          '-e',
          `require('node:child_process').spawnSync('git', ['-C', ${JSON.stringify(repo)}, 'status', '--porcelain'], { timeout: 5000 }); setTimeout(() => {}, 3000)`,
        ],
        env: {},
        timeout_ms: 6_000,
      },
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
    `the server got HOME=${H} although its .gitconfig's [include] path, continued over a line, names ${W}/gitconfig, ` +
      `and the host's git ran the block's fsmonitor hook: ${landed(marker)} (${out.slice(0, 400)})`,
  )
})
