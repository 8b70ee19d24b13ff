// Attack (eighteenth outsider pass; surface: src/mcp-client/home-includes.ts shellFile). Since the
// seventeenth pass the shell start files are read for what they name, and the files their `.`/`source`
// commands name are read too. A `.` whose operand is a loop variable names nothing to the reader, so
// the files a loop sources are never read. That is Fedora's (and RHEL's) default `~/.bashrc`:
//     for rc in ~/.bashrc.d/*; do if [ -f "$rc" ]; then . "$rc"; fi; done
// with `~/.bash_profile` sourcing `~/.bashrc`. A snippet the person keeps there (a plain file, no link)
// that sources a file in a root passes, and the server's `bash -lc` sources the block's file.
//
// Reproduction: HOME=H (Fedora's default .bash_profile and .bashrc), a session on W=H/dotfiles;
// H/.bashrc.d/50-dotfiles.sh holding `. ~/dotfiles/aliases.sh`. The block rewrites W/aliases.sh and
// connects a server `bash -lc 'sleep 3'`. Expected: the server gets a private HOME (or is refused); the
// marker never written.
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, landed, runEngine } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-bashrc-d-')
const hostHome = process.env.HOME
test.after(() => {
  process.env.HOME = hostHome
})

// Fedora 40's /etc/skel files (the parts that source).
const BASH_PROFILE =
  '# .bash_profile\n\n# Get the aliases and functions\nif [ -f ~/.bashrc ]; then\n\t. ~/.bashrc\nfi\n'
const BASHRC =
  '# .bashrc\n\n# User specific aliases and functions\nif [ -d ~/.bashrc.d ]; then\n\tfor rc in ~/.bashrc.d/*; do\n\t\tif [ -f "$rc" ]; then\n\t\t\t. "$rc"\n\t\tfi\n\tdone\nfi\nunset rc\n'

test("a snippet in ~/.bashrc.d (sourced by Fedora's default .bashrc loop) sourcing a root's file is read", () => {
  const H = join(base, 'home')
  const W = join(H, 'dotfiles')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [H, W, join(H, '.bashrc.d'), home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(H, '.bash_profile'), BASH_PROFILE)
  writeFileSync(join(H, '.bashrc'), BASHRC)
  writeFileSync(join(H, '.bashrc.d', '50-dotfiles.sh'), '. ~/dotfiles/aliases.sh\n')
  writeFileSync(join(W, 'aliases.sh'), 'alias ll="ls -l"\n')
  process.env.HOME = H
  const text = `echo "W/aliases.sh, written by the block, sourced on the host through ~/.bashrc.d/50-dotfiles.sh" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    { shell: { command: '/bin/bash', args: ['-lc', 'sleep 3'], env: {}, timeout_ms: 6_000 } },
    [
      `W = ${JSON.stringify(W)}`,
      `open(W + '/aliases.sh', 'w').write(${JSON.stringify(text)})`,
      "print('planted')",
      ...connectEach(['shell']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.equal(
    landed(marker),
    '',
    `the server got HOME=${H} although ~/.bashrc.d/50-dotfiles.sh (sourced by .bashrc's loop) sources the session ` +
      `root's ${W}/aliases.sh, and the host's bash -l sourced the block's file: ${landed(marker)} (${out.slice(0, 400)})`,
  )
})
