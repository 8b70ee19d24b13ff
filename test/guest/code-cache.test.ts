// Issue 15 §5: a block text run before skips parse, rewrite and compile (vis_guest/codecache.py),
// and nothing a block can observe changes: results, error positions, warnings, the "defined in
// an earlier block" note, refusals that depend on the tools bound now.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Guest, startGuest } from './harness.js'

type Stats = { entries: number; hits: number }

let g: Guest
before(async () => {
  g = await startGuest({ tools: { echo: { fn: (x: unknown) => x, signature: '(x)' } } })
})
after(async () => {
  await g.close()
})

const stats = () => g.call<Stats>('code_cache')

describe('the code cache', () => {
  test('a text run again comes from the cache and runs against the globals of now', async () => {
    await g.runBlock('n = 1')
    const before = await stats()
    const a = await g.runBlock('n += 1\nprint(n)')
    const b = await g.runBlock('n += 1\nprint(n)')
    const c = await g.runBlock('n')
    const d = await g.runBlock('n')
    assert.equal(a.stdout, '2\n')
    assert.equal(b.stdout, '3\n')
    assert.equal(c.result, 3)
    assert.equal(d.result, 3)
    const after = await stats()
    assert.equal(after.hits - before.hits, 2, 'the second run of each text was a hit')
  })

  test('a cached block fails where it fails, with its line and excerpt', async () => {
    const code = 'x = 1\ny = x / 0\nprint("never")'
    const first = await g.runBlock(code)
    const second = await g.runBlock(code)
    assert.equal(first.error?.line, 2)
    assert.deepEqual(second.error, first.error === undefined ? undefined : { ...first.error })
    assert.match(second.error?.excerpt ?? '', /y = x \/ 0/)
    assert.equal(second.stdout, undefined)
  })

  test('code that defines functions is never cached: an earlier block stays an earlier block', async () => {
    const before = await stats()
    const code = 'if "boom" not in globals():\n    boom = lambda: 1 / 0\nboom()'
    const first = await g.runBlock(code)
    const second = await g.runBlock(code)
    assert.match(first.error?.message ?? '', /ZeroDivisionError/)
    assert.doesNotMatch(first.error?.message ?? '', /earlier block/)
    // The lambda now comes from the first run: the second run says so.
    assert.match(second.error?.message ?? '', /defined in an earlier block/)
    assert.equal((await stats()).hits, before.hits)
  })

  test('a def named after a tool bound since is refused although the text ran before', async () => {
    const code = 'def helper_x():\n    return 1'
    assert.equal((await g.runBlock(code)).error, undefined)
    await g.bind('helper_x', () => 'tool')
    const again = await g.runBlock(code)
    assert.equal(again.error?.phase, 'syntax')
    assert.deepEqual(again.error?.flags, ['tool-name'])
    await g.remove('helper_x')
  })

  test('a compile warning shows on every run, and changed warning filters are honoured', async () => {
    const code = 'v = 300\nsame = v is 300'
    const seen = () => (g.streamed().match(/SyntaxWarning/g) ?? []).length
    const n0 = seen()
    await g.runBlock(code)
    await g.runBlock(code)
    assert.equal(seen() - n0, 2, 'shown on both runs')
    // Ignored, the text is cached; shown again once the filters change back.
    await g.runBlock('import warnings\nwarnings.simplefilter("ignore", SyntaxWarning)')
    const quiet = 'q = 300\nsame = q is 300'
    await g.runBlock(quiet)
    await g.runBlock(quiet)
    const n1 = seen()
    assert.equal(n1, n0 + 2, 'ignored while the filter says so')
    await g.runBlock('warnings.resetwarnings()')
    await g.runBlock(quiet)
    assert.equal(seen(), n1 + 1, 'shown again under the new filters')
  })

  test("the parser's own warnings show on every run too", async () => {
    // An invalid escape is reported while parsing (a DeprecationWarning before 3.12, shown
    // here by an "always" filter), and this block is rewritten, so compiled from its tree.
    await g.runBlock('import warnings\nwarnings.simplefilter("always")')
    const code = 'print(len("\\d"))'
    const seen = () => (g.streamed().match(/invalid escape sequence/g) ?? []).length
    const n0 = seen()
    assert.equal((await g.runBlock(code)).stdout, '2\n')
    const n1 = seen()
    assert.ok(n1 > n0, 'warned on the first run')
    assert.equal((await g.runBlock(code)).stdout, '2\n')
    assert.equal(seen() - n1, n1 - n0, 'and as much on the second')
    await g.runBlock('warnings.resetwarnings()')
  })
})
