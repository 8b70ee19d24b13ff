// ATTACK (surface 6, disk budget): the budget is checked while a block runs, at host calls and
// at block end. A block that starts a thread and returns leaves a writer that nothing checks
// while the session sits idle between blocks (an agent waiting on its model, a person reading):
// the roots grow without bound (here 6 x 16 MiB = 96 MiB against a 20 MiB budget, slowly, after
// the block ended cleanly), filling the host's disk. SECURITY.md admits "seen at the next block
// or host call": there may never be one. README: "the session's roots may grow by at most
// limits.diskBudgetMb". On the current code the root reaches 96 MiB and the writer is never
// interrupted.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

let rt: Runtime
const made: string[] = []
before(async () => {
  const { home } = tempHome('attack-disk-after')
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

const allocatedMiB = (dir: string) =>
  readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).blocks * 512, 0) / (1 << 20)

test('a thread left writing after its block ended is still held to the disk budget', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-after-'))
  made.push(root)
  const s = await rt.createSession({ roots: [root], limits: { diskBudgetMb: 20, wallClockMs: 60_000 } })
  try {
    const r = await s.runBlock(
      `import os, threading, time
def writer():
    time.sleep(0.5)                      # after the block's end check
    for i in range(6):
        with open(${JSON.stringify(root)} + f'/late{i}', 'wb') as f:
            f.write(os.urandom(16 << 20))
        time.sleep(0.3)
threading.Thread(target=writer, daemon=True).start()
print('returned')`,
    )
    assert.equal(r.error ?? null, null, JSON.stringify(r.error))
    // Idle session: poll the root until the writer is done or has been stopped.
    const until = Date.now() + 30_000
    let last = -1
    let stable = 0
    while (Date.now() < until && stable < 20) {
      const now = allocatedMiB(root)
      stable = now === last ? stable + 1 : 0
      last = now
      await new Promise((res) => setTimeout(res, 100))
    }
    // Unchecked, all six files land (96 MiB). Checked between blocks, the writer is refused within
    // a check or two of passing the budget: at most two more files on a loaded machine.
    assert.ok(
      last <= 64,
      `the idle session's roots grew by ${last.toFixed(0)} MiB against a 20 MiB budget (disk.exceeded=${s.disk.exceeded})`,
    )
  } finally {
    await s.dispose()
  }
})
