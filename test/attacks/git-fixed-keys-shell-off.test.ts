// ATTACK (surface 4, the git tool; SECURITY.md "In scope: ... creating processes when the shell
// is off"): the git tool's protective command-line config overrides hooks, fsmonitor, pager,
// editors, askpass, credential helpers, sshCommand and signing-by-default, and SECURITY.md's
// known gap lists only keys "whose names the repository chooses" (filter/diff/merge drivers,
// diff.external, remote.*.uploadpack, core.alternateRefsCommand). Two FIXED keys that run a
// program are left to the repository, and the model sets them with the allowed `git config`:
//  - core.gitProxy: `git fetch git://HOST/x` runs `<proxy> HOST 9418`; with core.gitProxy=sh
//    and HOST = a script the block wrote in the root (evil.sh), sh runs that script. Works with
//    the network off (nothing is dialled).
//  - gpg.format=ssh + gpg.ssh.defaultKeyCommand: `git commit -S` (-S is not refused; only
//    commit.gpgSign is forced off) runs the key command line (split, no shell needed: here
//    `sh -c ...`).
// Both run with `shell: false`. On the current code both markers appear (written as uid 65534
// by the programs git started).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

let rt: Runtime
const made: string[] = []
before(async () => {
  const { home } = tempHome('attack-git-fixed-keys')
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

function repo(): string {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-gitkeys-'))
  made.push(root)
  execFileSync('git', ['init', '-q', root])
  return root
}

const ATTEMPT = `async def attempt(*args):
    try:
        out = await git(*args)
        print('RAN', args[0], out['exit'], out['stderr'].strip()[:160])
    except Exception as e:
        print('REFUSED', args[0], getattr(e, 'code', type(e).__name__))
`

test('with the shell off, core.gitProxy set by the model runs no program', async () => {
  const root = repo()
  const s = await rt.createSession({ roots: [root], shell: false })
  try {
    const r = await s.runBlock(
      `${ATTEMPT}
open('evil.sh', 'w').write('echo PROXY-RAN-$(id -u) > PROXY-RAN\\n')
await attempt('config', 'core.gitProxy', 'sh')
await attempt('fetch', 'git://evil.sh/repo')`,
      { timeoutMs: 30_000 },
    )
    assert.ok(!existsSync(join(root, 'PROXY-RAN')), `git ran sh evil.sh with the shell off: ${r.stdout}`)
  } finally {
    await s.dispose()
  }
})

test('with the shell off, gpg.ssh.defaultKeyCommand set by the model runs no program', async () => {
  const root = repo()
  const s = await rt.createSession({ roots: [root], shell: false })
  try {
    const r = await s.runBlock(
      `${ATTEMPT}
open('f.txt', 'w').write('x')
await attempt('config', 'user.name', 'x')
await attempt('config', 'user.email', 'x@example.com')
await attempt('config', 'gpg.format', 'ssh')
await attempt('config', 'gpg.ssh.defaultKeyCommand', 'sh -c "echo KEYCMD-RAN-$(id -u) > KEYCMD-RAN; echo key::ssh-ed25519 AAAA"')
await attempt('add', 'f.txt')
await attempt('commit', '-S', '-m', 'signed')`,
      { timeoutMs: 30_000 },
    )
    assert.ok(
      !existsSync(join(root, 'KEYCMD-RAN')),
      `git ran the key command with the shell off: ${r.stdout}`,
    )
  } finally {
    await s.dispose()
  }
})
