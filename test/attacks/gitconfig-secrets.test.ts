// ATTACK (host secrets): every tool jail binds the host user's ~/.gitconfig read-only and points
// GIT_CONFIG_GLOBAL at it ("identity, aliases"). That file routinely carries credentials:
// `url."https://x-access-token:<token>@github.com/".insteadOf`, `http.extraHeader =
// Authorization: Bearer <token>`, `github.token`, `sendemail.smtpPass`. The guest reads the
// whole file: `git('config', '--global', '--list')` (or `cat $GIT_CONFIG_GLOBAL` in shell()).
// Here HOME points at a temp directory whose .gitconfig holds a token; on the current code the
// token comes back to the sandbox. (Identity could be passed as GIT_AUTHOR_*/GIT_COMMITTER_*
// instead, or a filtered copy bound.)
//
// Now: the jail's GIT_CONFIG_GLOBAL is a file the host writes per session with only
// user.name and user.email; commits still carry the user's identity.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

const TOKEN = 'ghp_HOSTSECRET0123456789abcdefABCDEF'
let rt: Runtime
let root: string
let fakeHome: string
const realHome = process.env.HOME
before(async () => {
  const { home } = tempHome('attack-gitconfig')
  fakeHome = mkdtempSync(join(tmpdir(), 'vis-attack-userhome-'))
  writeFileSync(
    join(fakeHome, '.gitconfig'),
    `[user]\n\tname = Dev\n\temail = dev@example.com\n[url "https://x-access-token:${TOKEN}@github.com/"]\n\tinsteadOf = https://github.com/\n`,
  )
  process.env.HOME = fakeHome
  root = mkdtempSync(join(tmpdir(), 'vis-attack-gitcfg-'))
  execFileSync('git', ['init', '-q', root])
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  process.env.HOME = realHome
  rmSync(root, { recursive: true, force: true })
  rmSync(fakeHome, { recursive: true, force: true })
})

test("the host user's ~/.gitconfig credentials do not reach the sandbox", async () => {
  const s = await rt.createSession({ roots: [root], shell: true })
  try {
    const r = await s.runBlock(
      `out = await git('config', '--global', '--list')
print(out['stdout'])
sh = await shell('cat "$GIT_CONFIG_GLOBAL" 2>&1 || true')
print(sh['stdout'])`,
    )
    assert.doesNotMatch(r.stdout ?? '', new RegExp(TOKEN), `the sandbox read: ${r.stdout}`)
    // Both directions: the identity is there, and a commit made in the jail carries it.
    const c = await s.runBlock(
      `print((await git('config', '--global', 'user.email'))['stdout'].strip())
open('f.txt', 'w').write('x')
await git('add', 'f.txt')
print((await git('commit', '-q', '-m', 'm'))['exit'])
print((await git('log', '--format=%an <%ae>'))['stdout'].strip())`,
    )
    assert.equal(c.stdout?.trim(), 'dev@example.com\n0\nDev <dev@example.com>', c.stdout ?? '')
  } finally {
    await s.dispose()
  }
})
