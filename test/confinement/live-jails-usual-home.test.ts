// A vis process whose HOME is not the password database's home (a service, a container) records its
// jails in that home's ~/.vis/live-jails as well as its own (fourteenth outsider pass): its FIFO and
// each jail's entry are in both folders while the jail lives, liveJails() counts the jail once, and
// the entry leaves both folders at the jail's end.
import assert from 'node:assert/strict'
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { liveJailEntry, liveJails } from '../../src/util/live-jails.js'
import { processKey } from '../../src/util/vis-processes.js'

const base = mkdtempSync(join(tmpdir(), 'vis-live-jails-usual-'))
const savedHome = process.env.HOME
after(() => {
  process.env.HOME = savedHome
  rmSync(base, { recursive: true, force: true })
})

test('with HOME elsewhere, a jail is recorded (with its FIFO) in both folders, counted once, removed from both', () => {
  const usual = join(userInfo().homedir, '.vis', 'live-jails')
  process.env.HOME = join(base, 'service-home')
  const own = join(base, 'service-home', '.vis', 'live-jails')
  const root = mkdtempSync(join(base, 'root-'))
  const fd = openSync(root, 'r')
  const entry = liveJailEntry([{ real: root, fd }])
  const mine = (dir: string) =>
    existsSync(dir)
      ? readdirSync(dir).filter((n) => n.startsWith(`${processKey()}-`) && n.endsWith('.json'))
      : []
  try {
    entry.announce()
    entry.settle([])
    for (const dir of [own, usual]) {
      assert.equal(mine(dir).length, 1, `the entry is in ${dir}`)
      assert.ok(existsSync(join(dir, `${processKey()}.fifo`)), `the FIFO is in ${dir}`)
    }
    assert.equal(liveJails().filter((j) => j.roots.includes(root)).length, 1, 'counted once')
  } finally {
    entry.remove()
    closeSync(fd)
  }
  assert.deepEqual(mine(own), [])
  assert.deepEqual(mine(usual), [])
})
