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
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { threadTried, visExtList, withPlantingSession } from './live-jail-session.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-late-home-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('a vis home made inside a root after the session’s jail started is not written by that sandbox', async () => {
  const R = join(base, 'R')
  const outside = join(base, 'outside')
  mkdirSync(R)
  mkdirSync(outside)
  const lateHome = join(R, 'h')
  const marker = join(outside, 'ran-on-the-host')
  const planted = join(R, 'planted')
  await withPlantingSession(base, [R], { home: lateHome, planted, marker }, async () => {
    // The person starts vis with its home in the workspace: the home is made (and registered).
    const first = visExtList(lateHome, outside)
    // (fx9a: a fixed vis may refuse the home before making it; then there is nothing to plant in.)
    const refused = /\[home\.inside-live-session-root\]/.test(first.stderr)
    assert.ok(existsSync(lateHome) || refused, `vis made no home at ${lateHome}: ${first.stderr}`)
    // The sandbox's thread either wrote the new home or was refused: wait for it to finish trying.
    await threadTried(lateHome, planted)

    // The person's next command with that home.
    const second = visExtList(lateHome, outside)
    assert.ok(
      !existsSync(marker),
      `a thread of a session on R wrote ${lateHome}/extensions/evil.py into the vis home made there after its jail ` +
        `started, and \`vis ext list\` ran it on the host, outside every jail (${second.stdout.trim()} ${second.stderr.trim()})`,
    )
  })
})
