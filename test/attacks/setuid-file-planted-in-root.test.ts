// Attack (seventh outsider pass; SECURITY.md in scope: "changing metadata outside [the roots]",
// "kernel attack surface ... setuid"; the jail mounts the roots `nosuid`, and a draft's apply "lands no
// set-id bits"): on the TRUNK nothing stops a block from setting S_ISUID/S_ISGID on a file in a root.
// `nosuid` only disarms the bit inside the jail; on the host the file keeps it. The sandbox's uid 65534
// maps to the host user, so the file belongs to that user: a block copies `/bin/sh` (readable in the
// tool jail) into the workspace and `chmod 4755`s it, and every local account that can reach the
// workspace runs a shell as the host user (`./sh -p`). When the host runs as root (SECURITY.md allows it
// with a caveat about file ownership; this test machine does), that is a setuid-ROOT shell: any local
// user becomes root. Python's `os.chmod(p, 0o4755)` in a block does the same without the shell.
//
// Reproduction: a real engine session (shell on) on a root with ordinary 0755 permissions runs
// `cp /bin/sh sh && chmod 4755 sh`; the test checks the file's mode on the host and, where the host
// runs as root and `setpriv` exists, runs it as nobody with -p and reads the effective uid. It fails on
// the current code because the set-uid bit lands (and nobody gets euid 0 here) (a fix: seccomp or the
// audit hook refusing set-id bits in chmod/fchmod/fchmodat in the worker and tool jails, and the host
// tools never preserving them, as apply already does).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test('a block cannot leave a set-uid file in its root', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-setuid-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-setuid-root-'))
  made.push(home, root)
  chmodSync(root, 0o755) // an ordinary project directory
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root], shell: true })
    const r = await engine.runBlock(s.id, {
      code: [
        "r = await shell('cp /bin/sh sh && chmod 4755 sh; ls -l sh')",
        "print(r['stdout'], r['stderr'])",
      ].join('\n'),
      timeout_ms: 60_000,
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
  } finally {
    await engine.close()
  }
  const planted = join(root, 'sh')
  const mode = existsSync(planted) ? statSync(planted).mode : 0
  const st = existsSync(planted) ? statSync(planted) : undefined
  let demo = ''
  if (st && mode & 0o4000 && process.getuid?.() === 0) {
    const run = spawnSync(
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', planted, '-p', '-c', 'id'],
      {
        encoding: 'utf8',
      },
    )
    demo = `; run as nobody with -p it printed: ${(run.stdout || run.stderr || String(run.error)).trim()}`
  }
  assert.equal(
    mode & 0o6000,
    0,
    `a block left ${planted} with mode ${(mode & 0o7777).toString(8)} owned by uid ${st?.uid} on the host${demo}`,
  )
})
