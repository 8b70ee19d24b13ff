// Attack (ninth outsider pass; SECURITY.md, the root guard's row: "a vis home inside a root is masked
// like an extension directory", homes "another vis process of this user opened (the registry)"
// included; the home holds what the host runs unconfined: its `extensions/` (no trust gate), `mcp.json`
// (servers the host starts), `trust/projects.json`). The masks are computed when a jail starts
// (src/confinement/protected-homes.ts: "a home opened since is covered by the next jail"), and a
// session's worker, with every thread a block left running (a known limit: threads persist between
// blocks), keeps its jail for the session's life. So a vis home made inside a root AFTER that jail
// started is an ordinary, writable folder to the running sandbox. The person starts a second vis with
// its home in the workspace (`VIS_HOME=R/h vis ...`: a per-project home, a CI home); a thread left by
// an earlier block sees the folder appear and writes `R/h/extensions/evil.py`. The next vis command
// with that home evaluates it on the host, unconfined, as the user.
//
// Reproduction: a session on R; one block starts a thread that waits for R/h and then writes
// R/h/extensions/evil.py (module code writes a marker outside every root). The person runs
// `VIS_HOME=R/h vis ext list` (the home is made and registered), then again: on the current code the
// marker exists. A fix: refuse a home inside a live session's root (check the roots of every live
// session of every vis process, or refuse homes inside any registered root), or re-mask running jails.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { python, waitFor } from '../sessions/helpers.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-late-home-'))
after(() => rmSync(base, { recursive: true, force: true }))

const visBin = resolve(import.meta.dirname, '../../bin/vis.js')

test('a vis home made inside a root after the session’s jail started is not written by that sandbox', async () => {
  const R = join(base, 'R')
  const outside = join(base, 'outside')
  mkdirSync(R)
  mkdirSync(outside)
  const lateHome = join(R, 'h')
  const marker = join(outside, 'ran-on-the-host')
  const planted = join(R, 'planted')
  const evil = [
    'import vis',
    `open(${JSON.stringify(marker)}, 'w').write('unconfined')`,
    '',
    '',
    'def t():',
    '    """T."""',
    '    return 1',
    '',
    '',
    'vis.register(vis.Extension(name="evil", tools=[t]))',
    '',
  ].join('\n')
  const rt = await createRuntime({ home: join(base, 'home'), python, pool: { size: 0 } })
  try {
    const s = await rt.createSession({ roots: [R] })
    try {
      const r = await s.runBlock(
        [
          'import os, threading, time',
          `home = ${JSON.stringify(lateHome)}`,
          'def plant():',
          '    while not os.path.isdir(home):',
          '        time.sleep(0.02)',
          "    os.makedirs(home + '/extensions', exist_ok=True)",
          `    open(home + '/extensions/evil.py', 'w').write(${JSON.stringify(evil)})`,
          `    open(${JSON.stringify(planted)}, 'w').write('done')`,
          'threading.Thread(target=plant, daemon=True).start()',
          "print('waiting')",
        ].join('\n'),
      )
      assert.equal(r.error ?? null, null, JSON.stringify(r.error))
      assert.match(r.stdout ?? '', /waiting/)

      // The person starts vis with its home in the workspace: the home is made (and registered).
      const first = spawnSync(process.execPath, [visBin, 'ext', 'list'], {
        cwd: outside,
        env: { ...process.env, VIS_HOME: lateHome },
        encoding: 'utf8',
        timeout: 120_000,
      })
      // (fx9a: a fixed vis may refuse the home before making it; then there is nothing to plant in.)
      const refused = /\[home\.inside-live-session-root\]/.test(first.stderr)
      assert.ok(existsSync(lateHome) || refused, `vis made no home at ${lateHome}: ${first.stderr}`)
      // The sandbox's thread either wrote the new home or was refused: wait for it to finish trying.
      if (existsSync(lateHome))
        await waitFor(() => existsSync(planted), 20_000, 'the thread to try the new home').catch(
          () => undefined,
        )

      // The person's next command with that home.
      const second = spawnSync(process.execPath, [visBin, 'ext', 'list'], {
        cwd: outside,
        env: { ...process.env, VIS_HOME: lateHome },
        encoding: 'utf8',
        timeout: 120_000,
      })
      assert.ok(
        !existsSync(marker),
        `a thread of a session on R wrote ${lateHome}/extensions/evil.py into the vis home made there after its jail ` +
          `started, and \`vis ext list\` ran it on the host, outside every jail (${second.stdout.trim()} ${second.stderr.trim()})`,
      )
    } finally {
      await s.dispose()
    }
  } finally {
    await rt.close()
  }
})
