// Attack (thirteenth outsider pass; surface: the twelfth pass's rule on mcp.json `env`,
// src/mcp-client/server-env.ts checkServerEnv). A variable named like a code location whose value names a
// path inside a writable root is refused, "places in the vis home are exempt" -- and the exemption is
// decided FIRST, by the path's real path: `within(realish(place), realHome)`. A sandbox can make any path in
// its root a symlink, and its worker's outbox (VIS_OUTBOX, <home>/outbox/worker-*) lies in the vis home and
// is written by the sandbox. So the block turns W/src into a link to a folder in its outbox holding
// notes_server.py: the check sees W/src's real path in the vis home, skips it, and the host's python3
// imports the block's module through PYTHONPATH=W/src, unconfined. The same W path as a real folder is
// refused (the control), so the only thing that changed is a symlink the sandbox made.
//
// Reproduction: session on W; servers `control` (python3 -m notes_server, env PYTHONPATH=W/lib, a real
// folder) and `linked` (env PYTHONPATH=W/src). The block writes notes_server.py into VIS_OUTBOX/.keep and
// into W/lib, makes W/src -> VIS_OUTBOX/.keep, and connects both. Expected: both refused with
// mcp.launch-denied (a path in a root is the root's, wherever its link leads); the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-envlink-'))
after(() => rmSync(base, { recursive: true, force: true }))
const fixture = join(import.meta.dirname, 'fixtures', 'mcp-env-link-vis-home-host.ts')

test('a root path in mcp.json env that the sandbox links into its outbox is still refused', () => {
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, W, home, marker], {
    cwd: outside,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 240_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /control: mcp\.launch-denied/, `PYTHONPATH=W/lib (a real folder) is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `env PYTHONPATH=W/src, a link the block made to its outbox, passed the launch check as "in the vis home" ` +
      `and the host's python3 imported the block's module: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''} ` +
      `(${out.slice(0, 400)})`,
  )
})
