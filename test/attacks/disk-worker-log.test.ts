// ATTACK (surface 7, disk): a worker's fd 2 is its log file under <vis home>/logs, capped only by
// RLIMIT_FSIZE (= diskMb, 1 GiB by default) and not measured by the disk budget (roots + outbox).
// A block writes 48 MiB straight to fd 2 (os.write: nothing to refuse) against a 20 MiB budget;
// then it makes the host replace its worker (a block that swallows its interrupt is killed after
// the grace) and writes again: every replaced worker leaves its log behind, so each round adds up
// to another diskMb. Here 48 + 3 x 16 MiB land in the vis home (on the host's disk, outside
// every root) with no budget error and later writes still allowed. On the current code the
// logs directory holds ~96 MiB in four files.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

let rt: Runtime
let home: string
const made: string[] = []
before(async () => {
  home = tempHome('attack-disk-log').home
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

const logsMiB = () => {
  const dir = join(home, 'logs')
  return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).blocks * 512, 0) / (1 << 20)
}

test("a block's stderr cannot fill the vis home past the session's disk budget", async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-disklog-'))
  made.push(root)
  const s = await rt.createSession({ roots: [root], limits: { diskBudgetMb: 20, wallClockMs: 60_000 } })
  try {
    const r = await s.runBlock(
      `import os
for i in range(48):
    os.write(2, b'x' * (1 << 20))
print('wrote')`,
      { timeoutMs: 30_000 },
    )
    assert.equal(r.stdout, 'wrote\n', JSON.stringify(r.error))
    for (let round = 0; round < 3; round++) {
      await s.runBlock(
        `import os, time
for i in range(16):
    os.write(2, b'y' * (1 << 20))
while True:
    try:
        time.sleep(10)
    except BaseException:
        pass`,
        { timeoutMs: 1_000 },
      )
    }
    const grown = logsMiB()
    assert.ok(
      grown <= 24,
      `the session's stderr put ${grown.toFixed(0)} MiB in ${join(home, 'logs')} (${readdirSync(join(home, 'logs')).length} files) against a 20 MiB budget`,
    )
  } finally {
    await s.dispose()
  }
})
