// Attack (seventeenth outsider pass; surface: the HOME a stdio server gets, src/util/tool-home.ts
// configPlaceInRoot). The HOME walk asks of each entry below the dot folders whether it is a SYMBOLIC link
// into a root; a HARD link is a plain file to it. `ln ~/dotfiles/gitconfig ~/.gitconfig` (a dotfile
// manager's hard-link mode, or `ln` without -s) makes ~/.gitconfig and W/gitconfig one inode: a block that
// rewrites W/gitconfig in place rewrites ~/.gitconfig, and the host's git runs its core.fsmonitor. The
// symbolic-link form of the same file is refused since the fifteenth pass. The audit hook's refusal to
// open a many-link file for writing is no boundary (SECURITY.md, "Hard links", says native code writes
// it); here it is passed from Python by a rename race between its stat and the kernel's open.
//
// Reproduction: HOME=H, a session on W=H/dotfiles, H/.gitconfig a hard link of W/gitconfig; a repository
// outside W; a server that runs `git status` there at start. The block rewrites W/gitconfig in place
// (core.fsmonitor = W/fsmon.sh) and connects the server. Expected: the server gets a private HOME (or is
// refused); the marker never written. (Assumes the race lands; the block prints after how many tries.)
import assert from 'node:assert/strict'
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { connectEach, gitRepo, gitStatusAtStart, plantFsmonitor, runEngine } from './outsider14-run.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-dotfile-hardlink-'))
const hostHome = process.env.HOME
after(() => {
  process.env.HOME = hostHome
  rmSync(base, { recursive: true, force: true })
})

test("a ~/.gitconfig hard-linked to a file in a root does not configure the server's git", () => {
  const H = join(base, 'home')
  const W = join(H, 'dotfiles')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const repo = join(outside, 'repo')
  for (const d of [H, W, home, outside, repo]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(W, 'gitconfig'), '[user]\n\tname = Person\n\temail = person@example.invalid\n')
  linkSync(join(W, 'gitconfig'), join(H, '.gitconfig'))
  gitRepo(repo, H)
  process.env.HOME = H
  const out = runEngine(base, W, home, outside, { git: gitStatusAtStart(repo) }, [
    ...plantFsmonitor(
      W,
      marker,
      'W/fsmon.sh, written by the block, run on the host by git through ~/.gitconfig (a hard link of W/gitconfig)',
    ),
    // The audit hook refuses opening a file with two links for writing (SECURITY.md, "Hard links": a
    // Python-level check, not a boundary). It stats the path and the kernel opens it after: a thread that
    // swaps W/gitconfig with a one-link file by rename lets an open pass the check on the one-link file
    // and land on the linked one (checked on the fd; a bounded number of tries).
    'import threading',
    "open(W + '/plain', 'w').write('x')",
    'stop = False',
    'def swap():',
    '    while not stop:',
    '        try:',
    "            os.rename(W + '/gitconfig', W + '/held')",
    "            os.rename(W + '/plain', W + '/gitconfig')",
    "            os.rename(W + '/gitconfig', W + '/plain')",
    "            os.rename(W + '/held', W + '/gitconfig')",
    '        except OSError:',
    '            pass',
    't = threading.Thread(target=swap)',
    't.start()',
    'landed = 0',
    'for i in range(200000):',
    '    try:',
    "        f = open(W + '/gitconfig', 'r+')",
    '    except OSError:',
    '        continue',
    '    if os.fstat(f.fileno()).st_nlink > 1:',
    '        f.truncate(0)',
    "        f.write('[core]\\n\\tfsmonitor = ' + W + '/fsmon.sh\\n')",
    '        f.close()',
    '        landed = i + 1',
    '        break',
    '    f.close()',
    'stop = True',
    't.join()',
    "print('landed after', landed, 'tries')",
    "print('planted')",
    ...connectEach(['git']),
  ])
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `the server got HOME=${H} although its .gitconfig is a hard link of a file in the session root ${W} (the ` +
      `HOME walk asks only about symbolic links), and the host's git ran the block's fsmonitor hook: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 400)})`,
  )
})
