// A SKILL.md inside a root is the sandbox's to write, also while the host reads it (a sub_loop
// child's worker start while its parent's thread writes): the host's read is bounded by the
// read itself (at most the 256 KiB cap + 1 bytes through the fd), never by the size its fstat
// gave a moment before. The test-only check/use hook grows the file right after that fstat.
import assert from 'node:assert/strict'
import { appendFileSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { discover } from '../../src/skills/discover.js'
import { setCheckUseHook } from '../../src/util/check-use-hook.js'

test('a SKILL.md grown past its cap between the size check and the read is refused, not read', async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'vis-skills-grow-')))
  const root = join(base, 'work')
  const dir = join(root, '.claude', 'skills', 'grow')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'SKILL.md')
  writeFileSync(file, '---\nname: grow\ndescription: Grows while read\n---\nbody\n')
  const input = { roots: [root], visHome: join(base, 'home', '.vis'), userHome: join(base, 'home') }

  // Allowed: the small file is read and the skill found.
  const ok = await discover(input)
  assert.deepEqual(
    ok.skills.map((s) => [s.name, s.text.length < 1024]),
    [['grow', true]],
  )

  let grown = 0
  setCheckUseHook((point, rel) => {
    if (point !== 'beneath.opened' || !rel.endsWith('SKILL.md') || grown > 0) return
    appendFileSync(file, `${'y'.repeat(1023)}\n`.repeat(1024)) // +1 MiB
    grown++
  })
  let f: Awaited<ReturnType<typeof discover>>
  try {
    f = await discover(input)
  } finally {
    setCheckUseHook(undefined)
  }
  assert.equal(grown, 1, 'the file grew between the check and the read')
  assert.deepEqual(f.skills, [], 'no skill text past the cap is kept')
  const problem = f.problems.find((p) => p.path.endsWith(join('skills', 'grow')))
  assert.ok(problem, JSON.stringify(f.problems))
  assert.match(problem.reason, /SKILL\.md: larger than 262144 bytes/)
})
