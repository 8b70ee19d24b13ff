// Paths in a draft's diff are quoted as git quotes them, so a name the sandbox chose (newlines,
// quotes, control characters) cannot add lines to the diff a person reviews before applying.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { quotePath } from '../../src/drafts/render.js'

test('quotePath writes what git writes for every kind of name', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vis-quote-'))
  execFileSync('git', ['init', '-q'], { cwd: dir })
  const names = [
    'plain.txt',
    'run.sh\nnew file mode 100644\n+INJECTED',
    'q"uote',
    'back\\slash',
    'tab\there',
    'é-ü',
    'bell\x07\x7f',
  ]
  for (const n of names) writeFileSync(join(dir, n), 'x\n')
  execFileSync('git', ['add', '-A'], { cwd: dir })
  const listed = execFileSync('git', ['diff', '--cached', '--name-only'], { cwd: dir, encoding: 'utf8' })
    .trim()
    .split('\n')
    .sort()
  assert.deepEqual(names.map((n) => quotePath(n)).sort(), listed)
  // Quoted names hold no raw line break: one name, one line.
  for (const n of names) assert.ok(!quotePath(`a/${n}`).includes('\n'))
  assert.equal(quotePath('a/plain.txt'), 'a/plain.txt')
})
