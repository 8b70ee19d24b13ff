// ATTACK (surface 5, drafts; the same helper serves skills): the host reads a draft file for its
// diff (src/drafts/render.ts) by checking its size with fstat (at most MAX_TEXT_BYTES, 2 MiB, is
// shown as text) and then reading the descriptor to EOF (beneath.ts readAll, unbounded). The
// sandbox writes that file through the overlay while the host reads it: guest threads flipping
// one inode between a few bytes and a big text makes the check see the small size and the read
// get the big one. The host then holds, splits and diffs text past its own cap, and returns it
// to the block: here 8 MiB, but a file may be `diskMb` (1 GiB) big, and four children or
// several sessions can do it at once, so the host's memory is the sandbox's to take.
// skills/discover.ts readText has the same check-then-read (a SKILL.md capped at 256 KiB, read
// at each worker start, e.g. a sub_loop child's while its parent's thread flips the file).
// On the current code a draft_diff() returns more than the 2 MiB cap within a few tries.
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'

const python = process.env.VIS_PYTHON_VERSION
const CAP = 2 * 1024 * 1024

test('a draft file grown between the size check and the read is not read past the diff cap', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-root-'))
  for (let i = 0; i < 4; i++) writeFileSync(join(root, `f${i}.txt`), 'base\n')
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-home-'))
  process.env.VIS_HOME = home
  const e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await e.createSession({ roots: [root] })
    await e.draft(s.id).create('flip')
    const r = await e.runBlock(s.id, {
      timeout_ms: 120_000,
      code: `import os, threading, time
big = (b'x' * 79 + b'\\n') * (8 * 1024 * 1024 // 80)
stop = False
def flip(name):
    fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o644)
    while not stop:
        os.ftruncate(fd, 0)
        os.pwrite(fd, b'small\\n', 0)
        time.sleep(0.0005)
        os.pwrite(fd, big, 0)
threads = [threading.Thread(target=flip, args=(f'f{i}.txt',)) for i in range(4)]
for t in threads:
    t.start()
longest = 0
deadline = time.monotonic() + 60
try:
    while time.monotonic() < deadline:
        try:
            d = await draft_diff()
        except Exception:
            continue
        text = d if isinstance(d, str) else str(d)
        # The largest one file's part of the diff (each is capped on its own).
        longest = max([longest] + [len(part) for part in text.split('diff --git')])
        if longest > ${CAP} * 1.25:
            break
finally:
    stop = True
    for t in threads:
        t.join()
print('LONGEST', longest)`,
    })
    const m = /LONGEST (\d+)/.exec(r.block.stdout ?? '')
    assert.ok(m, JSON.stringify(r.block))
    const longest = Number(m[1])
    assert.ok(
      longest <= CAP * 1.25,
      `draft_diff() showed one file in ${longest} characters: the host read it past its ${CAP}-byte cap`,
    )
  } finally {
    await e.close()
  }
})
