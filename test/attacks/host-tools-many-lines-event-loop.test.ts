// Attack (eighth outsider pass; SECURITY.md "Host-side work of the file tools": "none of their own work
// may grow with that text past a bound"; the sixth pass's patch-search fix: "at most 4M line
// comparisons, then refuses with tool.search-too-costly"). The bound counts comparisons, not the work
// around them: `cat` and `patch` read a file of up to 32 MiB and split, number and anchor EVERY line
// synchronously on the event loop before any bound applies. A file of 32 MiB of newlines is 33 554 416
// lines: one `cat` of it (even with an offset near the end) holds the host's event loop for about 2 s
// and adds ~1 GB to the host's RSS; one `patch` whose search is not in it holds the loop ~5 s before it
// refuses with tool.search-too-costly. Every other session, event stream and request waits meanwhile,
// and a block can repeat it (or gather several) at will.
//
// Reproduction: a block writes nl.txt (32 MiB - 16 bytes of "\n", inside the 32 MiB read cap and the
// disk budget); the next blocks call cat("nl.txt") and patch() with a search that is not there. The
// test measures the longest gap of a 10 ms host timer during each. A fix: bound the lines a host tool
// splits/anchors on the event loop (or do it in a worker thread), as the glob and the search were.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'
import { worstStall } from './event-loop-stall.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-many-lines-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('cat and patch of a file of 33 million empty lines do not stall the host event loop for seconds', async () => {
  const home = join(base, 'home')
  const root = join(base, 'root')
  mkdirSync(home)
  mkdirSync(root)
  process.env.VIS_HOME = home
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    const w = await e.runBlock(s.id, { code: "open('nl.txt', 'w').write('\\n' * (32 * 1024 * 1024 - 16))" })
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))
    const stalls: string[] = []
    for (const code of [
      'r = await cat("nl.txt", offset=33000000); print(r["total_lines"])',
      'try:\n    await patch([{"path": "nl.txt", "search": "\\n\\nq", "replace": "x"}])\nexcept Exception as ex:\n    print(getattr(ex, "code", ex))',
    ]) {
      const { result, worst } = await worstStall(() => e.runBlock(s.id, { code, timeout_ms: 120_000 }))
      if (worst >= 1000)
        stalls.push(
          `${code.includes('patch(') ? 'patch' : 'cat'}: ${Math.round(worst)} ms (${JSON.stringify(result.block.stdout ?? result.block.error).slice(0, 80)})`,
        )
    }
    assert.deepEqual(
      stalls,
      [],
      `the host's event loop stood still, every other session waiting: ${stalls.join('; ')}`,
    )
  } finally {
    await e.close()
  }
})
