// Attack (tenth outsider pass, on the ninth pass's fix; SECURITY.md Roots, "A vis home opened inside a LIVE
// session's root": every jail records "its roots' real paths" in ~/.vis/live-jails/, and opening a home is
// refused while a live jail "has a root around it that does not mask it"). The record holds PATHS taken
// when the jail started, while the jail's mount holds the DIRECTORY: a directory renamed afterwards is
// still the live sandbox's root, under a name no record has. Renaming a root is easy for whoever can write
// its parent: the person (`mv proj proj-v2`), or another session whose root holds it (here session T, on
// the workspace around S's root, renames S's root and ends). The person then opens a home inside the
// renamed directory (`VIS_HOME=ws/proj-v2/h`): the guard compares the home with S's recorded root
// `ws/proj`, finds nothing around it, and opens it; S's thread writes `h/extensions/evil.py`, and the
// next `vis ext list` with that home runs it on the host, unconfined.
//
// Reproduction: session S on ws/proj starts a thread that waits for ws/proj-v2/h and writes
// h/extensions/evil.py (module code writes a marker outside ws); session T on ws runs
// os.rename('ws/proj', 'ws/proj-v2') and is disposed; then `VIS_HOME=ws/proj-v2/h vis ext list` twice.
// A fix: record each root's identity (device and inode, from the fd the jail binds) and judge a home by
// the identities of its ancestors, not by path.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { threadTried, visExtList, withPlantingSession } from './live-jail-session.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-live-renamed-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('a live session’s root renamed after its jail started still counts as its root when a home is opened', async () => {
  const ws = join(base, 'ws')
  const proj = join(ws, 'proj')
  const renamed = join(ws, 'proj-v2')
  const outside = join(base, 'outside')
  mkdirSync(proj, { recursive: true })
  mkdirSync(outside)
  const lateHome = join(renamed, 'h')
  const marker = join(outside, 'ran-on-the-host')
  const planted = join(renamed, 'planted')
  // S's thread: the jail shows its root at `proj`, whatever the host calls it later.
  const plant = { home: join(proj, 'h'), planted: join(proj, 'planted'), marker }
  await withPlantingSession(base, [proj], plant, async (rt) => {
    // Session T, on the workspace around S's root, renames it, then ends.
    const t = await rt.createSession({ roots: [ws] })
    const rt2 = await t.runBlock(
      `import os\nos.rename(${JSON.stringify(proj)}, ${JSON.stringify(renamed)})\nprint('renamed')`,
    )
    assert.match(rt2.stdout ?? '', /renamed/, JSON.stringify(rt2.error))
    await t.dispose()

    // The person opens a home inside the renamed directory, twice.
    const first = visExtList(lateHome, outside)
    const refused = /home\.inside-live-session-root/.test(first.stderr + first.stdout)
    await threadTried(lateHome, planted)
    const second = visExtList(lateHome, outside)
    assert.ok(
      !existsSync(marker),
      `session S's root was renamed to ${renamed} while S ran; a vis home opened there was not refused ` +
        `(first open ${refused ? 'refused' : 'allowed'}), S's thread wrote its extensions/evil.py and \`vis ext list\` ran it on the host: ` +
        `${existsSync(marker) ? readFileSync(marker, 'utf8') : ''} (${second.stdout.trim()} ${second.stderr.trim().slice(0, 300)})`,
    )
  })
})
