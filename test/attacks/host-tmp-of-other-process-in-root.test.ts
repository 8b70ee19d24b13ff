// Attack (eleventh outsider pass; SECURITY.md, the host's temp directory (tenth pass): the tool jails'
// shared PYTHONUSERBASE `vis-toolsite-*`, each egress proxy's `vis-egress-*/egress.sock`, the jails'
// hosts and git config files live in the host's temp directory, and "a root that is or contains
// `os.tmpdir()` or any of those" is refused, `policy.root-holds-host-tmp`, since "a root holding that
// directory would let one session rewrite or connect to what other sessions' jails use"). The list is
// this PROCESS's: its os.tmpdir() and the folders its own makeHostStateDir used
// (src/util/host-state-dirs.ts). Another vis process of the same user with another TMPDIR (a
// `vis serve` from a systemd unit or a tmux whose TMPDIR is `~/tmp`, a `vis run` from a shell with the
// default `/tmp`) keeps its jails' shared files where this process's guard never looks. A session of
// process B rooted at a folder holding process A's TMPDIR is allowed, and its block replaces the
// `usercustomize.py` of A's tool site (a link to the package's toolsite.py, in a 0700 folder of the same
// user): the next `python3` any session of A runs under shell() runs B's code inside A's tool jail, with
// A's roots, which B never had (it writes a file into A's root here).
//
// Reproduction: A (child, TMPDIR=W/tmp) has a shell session (network on) on RA and runs python3 once; B (this
// process, TMPDIR=/tmp) creates a session on W: allowed. B's block rewrites
// W/tmp/vis-toolsite-*/lib/python3.11/site-packages/usercustomize.py to write $HOME/pwned (HOME is the
// tool jail's first root, RA); A runs python3 under shell() again: RA/pwned exists. A fix: record every
// vis process's host state folders where other processes read them (beside the live jails) and refuse a
// root holding any of them; or keep them under a per-user directory no root may hold.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { python, waitFor } from '../sessions/helpers.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-other-tmp-'))
let a: ChildProcess | undefined
after(async () => {
  if (a && a.exitCode === null) {
    a.kill('SIGTERM')
    await new Promise((done) => {
      const t = setTimeout(() => {
        a?.kill('SIGKILL')
        done(undefined)
      }, 15_000)
      a?.once('exit', () => {
        clearTimeout(t)
        done(undefined)
      })
    })
  }
  rmSync(base, { recursive: true, force: true })
})

const fixture = join(import.meta.dirname, 'fixtures', 'tool-site-holder.ts')

test("a root holding another vis process's temp directory cannot rewrite what that process's tool jails run", async () => {
  const W = join(base, 'W')
  const RA = join(base, 'RA')
  const tmpA = join(W, 'tmp')
  for (const d of [W, RA, tmpA]) mkdirSync(d, { recursive: true })
  a = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, RA, join(base, 'home-a')], {
    cwd: base,
    env: { ...process.env, TMPDIR: tmpA },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  a.stdout!.on('data', (b) => {
    out += b
  })
  a.stderr!.on('data', (b) => {
    err += b
  })
  await waitFor(() => /ready/.test(out) || a!.exitCode !== null, 120_000, "A's first shell call")
  assert.match(out, /first: 42/, `${out}\n${err}`)

  const rt = await createRuntime({ home: join(base, 'home-b'), python, pool: { size: 0 } })
  let planted = ''
  try {
    const s = await rt.createSession({ roots: [W] })
    const r = await s.runBlock(
      [
        'import glob, os',
        `sites = glob.glob(${JSON.stringify(`${tmpA}/vis-toolsite-*/lib/python3.*/site-packages`)})`,
        'for d in sites:',
        "    p = os.path.join(d, 'usercustomize.py')",
        '    os.remove(p)',
        "    open(p, 'w').write(\"import os\\nopen(os.path.join(os.environ.get('HOME', '.'), 'pwned'), 'w').write('from another session')\\n\")",
        "print('replaced', len(sites))",
      ].join('\n'),
      { timeoutMs: 60_000 },
    )
    planted = `${r.stdout ?? ''}${JSON.stringify(r.error ?? null)}`
    await s.dispose()
  } catch (e) {
    planted = `B's session: ${(e as Error).message}`
  } finally {
    await rt.close()
  }
  a.stdin!.write('go\n')
  await waitFor(() => /again:/.test(out) || a!.exitCode !== null, 120_000, "A's second shell call")
  assert.ok(
    !existsSync(join(RA, 'pwned')),
    `a session of process B, rooted at a folder holding process A's TMPDIR, rewrote A's tool site (${planted.trim()}); ` +
      `A's next shell python3 ran B's code in A's tool jail and wrote into A's root: ${existsSync(join(RA, 'pwned')) ? readFileSync(join(RA, 'pwned'), 'utf8') : ''}`,
  )
})
