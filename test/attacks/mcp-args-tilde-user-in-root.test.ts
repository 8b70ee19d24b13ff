// Attack (sixteenth outsider pass; surface: checkArgs in src/mcp-client/launch.ts).
// In an env value `~user/...` is refused (env-spellings.ts reports it as unresolved: this check cannot
// locate another user's home without the password database), but checkArgs reads only the `paths` of the
// same readings and drops `unresolved` (and `commands`, `unbounded`), so `~<user>/proj/tools/hook.sh` in args
// passes while the shell the args start (`bash -c`, `sh -c`) expands it to that user's home, which may be the
// person's own: `bash -lc "source ~me/proj/.venv/bin/activate && exec server"`.
//
// Reproduction: W made under the current user's home (os.homedir(), removed after); session on W; servers
// `control` (env BASH_ENV=~<user>/.../W/tools/hook.sh) and `tilde` (args `-c ". ~<user>/.../W/tools/hook.sh;
// node ..."`), command /bin/bash. The block writes W/tools/hook.sh (appends to a marker outside W) and connects
// both.
// Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { homedir, tmpdir, userInfo } from 'node:os'
import { join, relative } from 'node:path'
import { after, test } from 'node:test'
import { connectEach, landed, runEngine, type Server } from './outsider14-run.js'

const base = realpathSync(mkdtempSync(join(homedir(), 'vis-attack-mcp-args-tilde-user-')))
const markers = realpathSync(mkdtempSync(join(tmpdir(), 'vis-attack-mcp-args-tilde-marker-')))
after(() => {
  rmSync(base, { recursive: true, force: true })
  rmSync(markers, { recursive: true, force: true })
})

test('~user in args naming a file in a root is refused', () => {
  assert.ok(existsSync('/bin/bash'), 'this test needs bash')
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(markers, 'outside')
  for (const d of [W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const hook = join(W, 'tools', 'hook.sh')
  const spelled = `~${userInfo().username}/${relative(realpathSync(homedir()), hook)}`
  const server = (args: string[], env: Record<string, string>): Server => ({
    command: '/bin/bash',
    args,
    env,
    timeout_ms: 6_000,
  })
  const sleeper = `node -e "setTimeout(() => {}, 3000)"`
  const text = `echo "W/tools/hook.sh, written by the block, sourced on the host by bash" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server(['-c', sleeper], { BASH_ENV: spelled }),
      tilde: server(['-c', `. ${spelled}; ${sleeper}`], {}),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/tools', exist_ok=True)",
      `open(W + '/tools/hook.sh', 'w').write(${JSON.stringify(text)})`,
      "print('planted')",
      ...connectEach(['control', 'tilde']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `env BASH_ENV=${spelled} is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `args ["-c", ". ${spelled}; ..."] passed the launch check (checkArgs drops the unresolved ~user reading, while the ` +
      `same word in env is refused) and the host's bash sourced the block's file: ` +
      `${landed(marker)} (${out.slice(0, 500)})`,
  )
  assert.match(out, /tilde refused mcp\.launch-denied/, out)
})
