// ATTACK (surface 4, the git tool): the guard refuses options that name a program by exact
// spelling (`--upload-pack`, `--upload-pack=...`, `--receive-pack`, `--exec`, `--template`,
// `--ext-diff`, `--open-files-in-pager`, `--config`), but git's option parser accepts any
// unambiguous PREFIX of a long option. `git('fetch', '--upload-pac=<cmd>', '.')` therefore
// passes the guard and git runs <cmd> through /bin/sh in the git tool's jail: a shell command
// line of the model's choosing with `shell: false` (the hole test/attacks/git-shell-off.test.ts
// closed for the exact spellings). Same for ls-remote, clone and pull. On the current code each
// marker file appears in the root. Short options clustered behind another (`clone -qu <cmd>`:
// the guard checks only whether an argument STARTS with `-u`) pass the same way.
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
  const { home } = tempHome('attack-git-abbrev')
  root = mkdtempSync(join(tmpdir(), 'vis-attack-git-abbrev-'))
  execFileSync('git', ['init', '-q', root])
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  rmSync(root, { recursive: true, force: true })
})

test('with the shell off, abbreviated program options (--upload-pac=...) are refused like the full ones', async () => {
  const s = await rt.createSession({ roots: [root], shell: false })
  try {
    const r = await s.runBlock(
      `async def attempt(*args):
    try:
        out = await git(*args)
        print('RAN', args[0], out['exit'])
    except Exception as e:
        print('REFUSED', args[0], getattr(e, 'code', type(e).__name__))
await attempt('fetch', '--upload-pac=echo ran > UP-FETCH; false', '.')
await attempt('ls-remote', '--upload-pa=echo ran > UP-LSREMOTE; false', '.')
await attempt('clone', '--upload-p=echo ran > UP-CLONE; false', '.', 'c')
await attempt('pull', '--upload-pac=echo ran > UP-PULL; false', '.')
await attempt('clone', '-qu', 'echo ran > UP-CLONE-QU; false', '.', 'c2')`,
      { timeoutMs: 60_000 },
    )
    const ran = ['UP-FETCH', 'UP-LSREMOTE', 'UP-CLONE', 'UP-PULL', 'UP-CLONE-QU'].filter((f) =>
      existsSync(join(root, f)),
    )
    assert.deepEqual(ran, [], `git ran the model's shell command lines with the shell off: ${r.stdout}`)
  } finally {
    await s.dispose()
  }
})
