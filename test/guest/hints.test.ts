// Guest hints a newcomer meets (issue 33 §8), through a real session: apropos ranks a tool
// whose doc says what was asked above installed packages that merely share letters with it,
// and tools above packages at equal match; a reply opening with a markdown heading, a bullet
// list or sentences before its code gets the prose hint, not the unbalanced-quote one.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { patchDoc } from '../../src/tools/fs/patch.js'
import { type Guest, startGuest } from './harness.js'

let g: Guest
before(async () => {
  g = await startGuest({
    tools: {
      patch: { fn: () => 'patched', doc: patchDoc, signature: '(edits)' },
      grep: { fn: () => '', doc: 'Search files for a pattern.', signature: "(pattern, path='.')" },
      pkgtool: { fn: () => '', doc: 'Core utilities for Python packages.', signature: '()' },
    },
  })
})
after(async () => {
  await g.close()
})

const ranked = async (q: string) =>
  String((await g.runBlock(`apropos(${JSON.stringify(q)})`)).result).split('\n')

describe('apropos', () => {
  test('a tool whose doc holds the words ranks first; a package sharing letters does not outrank it', async () => {
    const lines = await ranked('replace lines in a file')
    assert.match(lines[0] ?? '', /^patch\(edits\) {2}\[tool\]/, lines.join('\n'))
    const pkg = lines.findIndex((l) => l.startsWith('packaging'))
    assert.ok(pkg === -1 || pkg > 0, lines.join('\n'))
    // Short words ("in", "a") match no name by themselves.
    assert.ok(!lines.some((l) => /\[package\]/.test(l) && !/replace|line|file/i.test(l)), lines.join('\n'))
  })

  test('at equal match a tool comes before an installed package', async () => {
    // "packages" is in pkgtool's doc and in the installed packaging's summary alike.
    const lines = await ranked('utilities packages')
    const tool = lines.findIndex((l) => l.startsWith('pkgtool'))
    const pkg = lines.findIndex((l) => l.startsWith('packaging'))
    assert.ok(tool >= 0 && pkg >= 0, lines.join('\n'))
    assert.ok(tool < pkg, lines.join('\n'))
  })
})

const PROSE: Array<[string, string]> = [
  [
    'a heading, then prose with an apostrophe',
    "## Root cause found\n\nThe parser doesn't flush its last line.\n\nprint(1)",
  ],
  [
    'a heading, then a lowercase sentence',
    "## Root cause found\nthe loop stops one line early, that's all\nprint(1)",
  ],
  [
    'a heading, then inline code opening the sentence',
    "## Fix\n`parse()` drops the last line when it's unterminated",
  ],
  ['a heading, then a bullet list', "## Root cause found\n\n- the loop stops early\n- it's off by one\n"],
  ['a bullet list with inline code', "- `parse()` can't see the last line\n- fix below"],
  ['sentences before the code', "The bug is in parse.\nIt's an off-by-one.\nfor i in range(3):\n    print(i"],
]

const CODE: Array<[string, string]> = [
  ['a comment heading over broken code', '## Helpers\ndef load(:\n    pass'],
  ['a comment over two names', '# compute\nx = foo bar'],
  ['an unclosed string after a heading-like comment', '## Config\nname = "abc\nprint(name)'],
]

describe('the prose hint', () => {
  for (const [what, code] of PROSE) {
    test(`prose: ${what}`, async () => {
      const out = await g.runBlock(code)
      assert.equal(out.error?.phase, 'syntax', JSON.stringify(out))
      assert.ok(out.error?.flags?.includes('prose'), JSON.stringify(out.error))
      assert.ok(!out.error?.flags?.includes('unbalanced'), JSON.stringify(out.error))
    })
  }
  for (const [what, code] of CODE) {
    test(`not prose: ${what}`, async () => {
      const out = await g.runBlock(code)
      assert.equal(out.error?.phase, 'syntax', JSON.stringify(out))
      assert.ok(!out.error?.flags?.includes('prose'), JSON.stringify(out.error))
    })
  }
})
