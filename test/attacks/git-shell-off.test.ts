// ATTACK (SECURITY.md "In scope: ... creating processes when the shell is off"): a session with
// `shell: false` still has the `git` tool, and git runs any command line it is told to:
// `git('-c', 'alias.y=!<cmd>', 'y')` (no repository needed; a repository's own .git/config
// alias, core.pager, core.fsmonitor or core.sshCommand do the same). The command runs under
// /bin/sh in the tool jail: arbitrary programs (sh, ps, curl, python3...) with the shell off.
// On the current code the command's output comes back (`RAN-42 as 65534 in sh`).
//
// Now: the model's options before the subcommand (-c, -C, --exec-path, --config-env) are
// refused with tool.bad-args, only git builtins run (a repository alias never resolves),
// options that name a program (rebase --exec, --upload-pack) are refused, and every call
// carries config that outranks the repository's (no hooks, fsmonitor, pager). What a
// repository's filters/drivers run is a known gap (SECURITY.md).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

let rt: Runtime
let root: string
before(async () => {
  const { home } = tempHome('attack-git-shell-off')
  root = mkdtempSync(join(tmpdir(), 'vis-attack-git-'))
  // A workspace that is a git repository (the git tool is bound for one).
  execFileSync('git', ['init', '-q', root])
  // The repository's own config (the model can write .git/config with its file tools):
  // an alias and an fsmonitor hook that run shell command lines.
  const cfg = (k: string, v: string) => execFileSync('git', ['config', k, v], { cwd: root })
  cfg('alias.y', '!echo REPO-ALIAS-$((6*7))')
  cfg('core.fsmonitor', 'echo ran > FSMONITOR-RAN; true')
  cfg('core.pager', 'echo PAGER-RAN; cat')
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  rmSync(root, { recursive: true, force: true })
})

test('with the shell off, git runs no command line of the guest', async () => {
  const s = await rt.createSession({ roots: [root], shell: false })
  try {
    const r = await s.runBlock(
      `try:
    await shell('echo shell')
    print('SHELL-AVAILABLE')
except Exception as e:
    print('no shell:', type(e).__name__)
try:
    out = await git('-c', 'alias.y=!echo RAN-$((6*7)) as $(id -u) in $0', 'y')
    print(out['stdout'])
except Exception as e:
    print('git refused:', str(e)[:200])`,
    )
    const out = r.stdout ?? ''
    assert.doesNotMatch(out, /SHELL-AVAILABLE/)
    assert.doesNotMatch(out, /RAN-42/, `a shell command ran with the shell off: ${out}`)
  } finally {
    await s.dispose()
  }
})

test('with the shell off, the repository config runs nothing and git refuses program options', async () => {
  const s = await rt.createSession({ roots: [root], shell: false })
  try {
    const r = await s.runBlock(
      `async def attempt(*args):
    try:
        out = await git(*args)
        print('RAN', args[0], out['exit'], out['stdout'].strip(), out['stderr'].strip()[:120])
    except Exception as e:
        print('REFUSED', args[0], getattr(e, 'code', type(e).__name__))
await attempt('-c', 'alias.y=!echo RAN-42', 'y')
await attempt('-C', '/tmp', 'status')
await attempt('--exec-path=/tmp', 'status')
await attempt('y')
await attempt('rebase', '--exec', 'echo RAN-42', 'HEAD')
await attempt('fetch', '--upload-pack=echo RAN-42', '.')
await attempt('status', '--short')
await attempt('-p', 'log')`,
    )
    const out = r.stdout ?? ''
    assert.doesNotMatch(out, /RAN-42|REPO-ALIAS-42|PAGER-RAN/, out)
    for (const a of ['-c', '-C', '--exec-path=/tmp', 'y', 'rebase', 'fetch', '-p']) {
      assert.match(out, new RegExp(`^REFUSED ${a.replace(/[-/]/g, '\\$&')} tool\\.bad-args$`, 'm'), out)
    }
    // Both directions: git itself still works, and the repository's fsmonitor never ran.
    assert.match(out, /^RAN status 0/m, out)
    assert.equal(existsSync(join(root, 'FSMONITOR-RAN')), false, 'the fsmonitor command ran')
  } finally {
    await s.dispose()
  }
})
