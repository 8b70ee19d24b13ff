// Attack (eighteenth outsider pass; surface: checkArgs in src/mcp-client/launch.ts, judge-word.ts). An
// argument naming a place in a root is refused "by path or identity", and a link into a root is judged by
// where it leads. A git worktree is a link by content: `git worktree add ~/wt/feature` (outside every
// root) leaves `~/wt/feature/.git`, a FILE holding `gitdir: W/.git/worktrees/feature`, and every git run in
// the worktree reads the repository's config and hooks from W/.git (its common dir), inside the session
// root. A git MCP server given the worktree (`--repository ~/wt/feature`, here `git -C <wt> status`) passes
// the launch check, and the host's git runs the core.fsmonitor the block wrote into W/.git/config.
//
// Reproduction: a session on W, a git repository; a worktree of it at <outside>/wt (made by the person
// before the session). The block appends `[core] fsmonitor = W/fsmon.sh` to W/.git/config and connects a
// server that runs `git -C <outside>/wt status` at start. A control server naming W itself is refused.
// Expected: the worktree server refused too; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, landed, runEngine, runsAtStart } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-git-worktree-')

test("a server's git run in a worktree (outside every root) of a root's repository is refused", () => {
  const { W, home, outside, marker } = attackFolders(base)
  const wt = join(outside, 'wt')
  const git = (args: string[]) => {
    const r = spawnSync('git', args, { encoding: 'utf8' })
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`)
  }
  git(['init', '-q', W])
  writeFileSync(join(W, 'README'), 'x\n')
  git(['-C', W, '-c', 'user.name=P', '-c', 'user.email=p@example.invalid', 'add', 'README'])
  git(['-C', W, '-c', 'user.name=P', '-c', 'user.email=p@example.invalid', 'commit', '-qm', 'one'])
  git(['-C', W, 'worktree', 'add', '-q', wt])
  const hook = `#!/bin/sh\necho "W/fsmon.sh, written by the block, run on the host by git in the worktree ${wt} through W/.git/config" >> ${JSON.stringify(marker)}\nexit 1\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: runsAtStart('git', ['-C', W, 'status', '--porcelain'], {}),
      worktree: runsAtStart('git', ['-C', wt, 'status', '--porcelain'], {}),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      `open(W + '/fsmon.sh', 'w').write(${JSON.stringify(hook)})`,
      "os.chmod(W + '/fsmon.sh', 0o755)",
      "open(W + '/.git/config', 'a').write('[core]\\n\\tfsmonitor = ' + W + '/fsmon.sh\\n')",
      "print('planted')",
      ...connectEach(['control', 'worktree']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `a server naming W is refused (${out})`)
  assert.equal(
    landed(marker),
    '',
    `a server running git in the worktree ${wt} (its .git file leads into the session root ${W}) started, and the ` +
      `host's git ran the block's fsmonitor hook from W/.git/config: ${landed(marker)} (${out.slice(0, 500)})`,
  )
})
