// ATTACK (surface 2, drafts: "very deep trees"): a block in a draft (shell on) makes a chain of
// 25 directories with 200-character names (about 5 KiB of path, built with relative `cd`s) and
// a file at the bottom. The host's draft code resolves each path from the tree's fd with one
// openat2, which fails with ENAMETOOLONG past PATH_MAX, and nothing catches it:
//  - GET /draft, GET /draft/diff and POST /draft/apply answer 500 http.internal ("Internal
//    error: ENAMETOOLONG: openat2 'ddd...'"): the person can no longer see or land the draft;
//  - abandon ends the draft in the database, then fails removing its directory (500): the
//    draft's upper directory, with everything the sandbox wrote, stays under <vis home>/drafts
//    for good (outside every budget), one more per draft.
// On the current code diff throws a raw ENAMETOOLONG error and the draft directory survives
// its abandon.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'

const home = mkdtempSync(join(tmpdir(), 'vis-attack-draftdeep-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-attack-draftdeep-root-'))
after(() => {
  // GNU rm walks with fds; node's rmSync fails with ENAMETOOLONG below PATH_MAX.
  execFileSync('rm', ['-rf', home, root])
})

test('a draft holding a tree deeper than PATH_MAX can still be reviewed and abandoned cleanly', async () => {
  writeFileSync(join(root, 'a.txt'), 'hello\n')
  const e = await createEngine({
    home,
    python: process.env.VIS_PYTHON_VERSION,
    pool: { size: 0 },
    extensions: false,
  })
  try {
    const s = await e.createSession({ roots: [root], shell: true })
    const d = e.draft(s.id)
    await d.create('deep')
    const sh =
      "n=$(printf 'd%.0s' $(seq 200)); for i in $(seq 25); do mkdir $n && cd $n 2>/dev/null || exit 1; done; echo deep > deepfile; echo ok"
    const r = await e.runBlock(s.id, {
      code: `r = await shell(${JSON.stringify(sh)})\nprint(r['stdout'].strip())`,
      timeout_ms: 30_000,
    })
    assert.equal(r.block.stdout, 'ok\n', JSON.stringify(r.block.error))
    const failures: string[] = []
    try {
      await d.diff()
    } catch (err) {
      const code = String((err as { code?: unknown }).code)
      // A refusal the API maps to a 4xx names a draft.* code; a raw errno is a 500.
      if (!code.startsWith('draft.')) failures.push(`diff: ${code}: ${String(err).slice(0, 120)}`)
    }
    await d.abandon('too deep').catch((err) => failures.push(`abandon: ${String(err).slice(0, 120)}`))
    const drafts = join(home, 'drafts')
    const left = existsSync(drafts) ? readdirSync(drafts) : []
    if (left.length > 0) failures.push(`left under ${drafts} after abandon: ${left.join(', ')}`)
    assert.deepEqual(failures, [], failures.join('\n'))
  } finally {
    await e.close()
  }
})
