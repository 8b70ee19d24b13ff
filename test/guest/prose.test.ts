// The prose hint (issue 13): a block that starts with prose instead of code fails as a syntax
// error that says so, with the flag `prose`; code that starts with a comment, a docstring or a
// decorator, and real syntax errors in code, never get it. Through a real session.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Guest, startGuest } from './harness.js'

let g: Guest
before(async () => {
  g = await startGuest()
})
after(async () => {
  await g.close()
})

const PROSE: Array<[string, string]> = [
  ['a markdown heading over a sentence', '## Steps\nI will read the file.\nprint(1)'],
  ['a heading, a blank line and a numbered list', '# Plan\n\n1. Read the config\n2. Print it'],
  ['a sentence with an apostrophe and brackets', "I've checked the file (it was fine)."],
  [
    'a sentence that introduces code',
    "Here is the code to list the files:\nimport os\nprint(os.listdir('.'))",
  ],
  ['a line mixing prose and code', 'Let me check the file: print(open("a.py").read())'],
  ['a sentence opening with a comma', "First, I'll read the config.\nprint(1)"],
  ['a markdown bullet list', '- read the file\n- print the result'],
  ['a code fence', '```python\nprint(1)\n```'],
  ['bold markdown', '**Plan**: read the file'],
]

const CODE_ERRORS: Array<[string, string]> = [
  ['an unclosed bracket', 'x = 1\nprint((x, 2)\ny = 3'],
  ['a missing colon', 'for i in range(3)\n    print(i)'],
  ['a stray equals sign', 'x = = 1'],
  ['assignment in a condition', 'x = 1\nif x = 1:\n    pass'],
  ['a broken def after a comment', '# Read the files\ndef load(:\n    pass'],
  ['a bad decorator line', '@dataclass(\nclass P:\n    x: int'],
  ['an unterminated string after a docstring', '"""Count the lines."""\ns = "abc\nprint(s)'],
  ['Python 2 print', 'print "hello"'],
  ['a capitalised name before a broken expression', 'Total = 1 +\nprint(Total)'],
  ['a keyword between names', 'None if x else'],
  ['unary minus on a broken expression', '- x +\n'],
  ['a class without its colon', 'class Config(dict)\n    x = 1'],
  ['a capitalised call left open', 'Config = dict(a=1, b=2\nprint(Config)'],
  ['a comparison chain cut short', 'Result is not None and'],
]

describe('the prose hint', () => {
  for (const [what, code] of PROSE) {
    test(`prose is flagged: ${what}`, async () => {
      const out = await g.runBlock(code)
      assert.equal(out.error?.phase, 'syntax', JSON.stringify(out))
      assert.ok(out.error?.flags?.includes('prose'), JSON.stringify(out.error))
      assert.match(out.error?.message ?? '', /hint: the reply starts with prose, and only Python runs here/)
      assert.equal(out.stdout, undefined, 'nothing ran')
    })
  }

  for (const [what, code] of CODE_ERRORS) {
    test(`a syntax error in code is not prose: ${what}`, async () => {
      const out = await g.runBlock(code)
      assert.equal(out.error?.phase, 'syntax', JSON.stringify(out))
      assert.ok(!out.error?.flags?.includes('prose'), JSON.stringify(out.error))
      assert.doesNotMatch(out.error?.message ?? '', /prose/)
    })
  }

  test('code that starts with a comment, a docstring or a decorator runs', async () => {
    const blocks = [
      '# Plan: read the file, then print it\nprint("comment")',
      '## Steps\n# I will read the file.\nprint("heading")',
      '"""I will read the file and print it."""\nprint("docstring")',
      'import functools\n@functools.lru_cache\ndef f():\n    return "decorator"\nprint(f())',
      'I = 1\nprint("capital", I)',
    ]
    const seen: string[] = []
    for (const code of blocks) {
      const out = await g.runBlock(code)
      assert.equal(out.error, undefined, `${code}: ${JSON.stringify(out.error)}`)
      seen.push((out.stdout ?? '').trim())
    }
    assert.deepEqual(seen, ['comment', 'heading', 'docstring', 'decorator', 'capital 1'])
  })
})
