import assert from 'node:assert/strict'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { makeHostStateDir } from '../../src/util/host-state-dirs.js'
import { liveJailEntry } from '../../src/util/live-jails.js'
import { realish } from '../../src/util/real-path.js'

// The other order of the eleventh pass's finding 4: a session (here a live-jail entry of this
// process, as any vis process's jail records itself) is live on W; a host whose TMPDIR then lies in
// W must not keep its jails' files there (W's sandbox could rewrite them). Refused with its code; a
// TMPDIR beside W still works.
test('a host state folder is not made in a temp directory inside a live session root', () => {
  const base = realish(mkdtempSync(join(tmpdir(), 'vis-state-dir-in-root-')))
  const W = join(base, 'W')
  const beside = join(base, 'beside')
  mkdirSync(join(W, 'tmp'), { recursive: true })
  mkdirSync(beside)
  const fd = openSync(W, 'r')
  const entry = liveJailEntry([{ real: W, fd }])
  const saved = process.env.TMPDIR
  try {
    entry.announce()
    entry.settle([])
    process.env.TMPDIR = join(W, 'tmp')
    assert.throws(
      () => makeHostStateDir('vis-test-state-'),
      (e: Error & { code?: string; context?: Record<string, unknown> }) =>
        e.code === 'confine.tmpdir-in-root' && e.context?.root === W && /TMPDIR/.test(e.message),
    )
    assert.deepEqual(readdirSync(join(W, 'tmp')), [], 'nothing was made inside the root')
    process.env.TMPDIR = beside
    const made = makeHostStateDir('vis-test-state-')
    assert.ok(made.startsWith(`${beside}/`) && existsSync(made))
  } finally {
    if (saved === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = saved
    entry.remove()
    closeSync(fd)
    rmSync(base, { recursive: true, force: true })
  }
})
