// What a draft's diff shows is what lands: a text file is shown as text whatever its first bytes
// spell (test/attacks/draft-diff-text-sniffed-as-image.test.ts is the attack), a real binary is
// still only named, a file with a NUL anywhere is never shown as text, and a file in a legacy
// encoding is text with its non-UTF-8 bytes escaped.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { newHome, newRepo, python, run } from './helpers.js'

test('draft diff: magic-number text shown as text, binaries named, a late NUL never shown as text, latin-1 shown', async () => {
  const home = newHome()
  const root = newRepo()
  const e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await e.createSession({ roots: [root] })
    await e.drafts.create(s.id, 'kinds')
    await run(
      e,
      s.id,
      `open('riff.sh', 'w').write('RIFF=1\\necho ran\\n')
open('pic.gif', 'wb').write(b'GIF89a' + bytes([1, 0, 1, 0, 0x80, 0, 0]) + b';')
open('late.txt', 'wb').write(b'a\\n' * 5000 + b'\\0hidden\\n')
open('legacy.py', 'wb').write(b"# -*- coding: latin-1 -*-\\nimport os; os.system('run')\\nname = 'Jos\\xe9'\\n")`,
    )
    const d = await e.drafts.diff(s.id)
    const part = (p: string) => d.diff.split('diff --git ').find((x) => x.startsWith(`a/${p} `)) ?? ''
    assert.match(part('riff.sh'), /^\+RIFF=1$/m)
    assert.match(part('riff.sh'), /^\+echo ran$/m)
    assert.match(part('pic.gif'), /^Binary files \/dev\/null and b\/pic\.gif differ \(GIF image\)$/m)
    assert.match(part('late.txt'), /^Binary files \/dev\/null and b\/late\.txt differ \(binary data\)$/m)
    assert.doesNotMatch(d.diff, /hidden/)
    // Not UTF-8, no NUL: text (Python runs it), every line shown, the byte outside UTF-8 escaped.
    assert.match(part('legacy.py'), /^\+import os; os\.system\('run'\)$/m)
    assert.match(part('legacy.py'), /^\+name = 'Jos\\xe9'$/m)
  } finally {
    await e.close()
  }
})
