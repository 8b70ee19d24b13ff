// Errors a model can act on: phase, the user's line/column, a numbered excerpt with a caret,
// hints with flags, and the loop-breaker.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { errorOf, type Guest, startGuest } from './harness.js'

let g: Guest
before(async () => {
  g = await startGuest({
    tools: {
      fail: () => {
        throw new Error('disk full')
      },
    },
    config: { tool_hints: { files: 'write_file(path, text)' } },
  })
})
after(async () => {
  await g.close()
})

describe('position and excerpt', () => {
  test('a runtime error points at the deepest frame of the user code, with a caret', async () => {
    const out = await g.runBlock('a = 1\n\ndef ratio(x):\n    return a / x\n\nratio(0)')
    assert.equal(out.error?.phase, 'runtime')
    assert.equal(errorOf(out).message, 'ZeroDivisionError: division by zero')
    assert.equal(errorOf(out).line, 4)
    assert.equal(errorOf(out).column, 12)
    assert.equal(
      errorOf(out).excerpt,
      '2 | \n3 | def ratio(x):\n4 |     return a / x\n  |            ^^^^^\n5 | \n6 | ratio(0)',
    )
  })
  test('an error inside a library is placed at the user line that called it, never the runtime', async () => {
    const out = await g.runBlock('import json\ndata = "{"\nparsed = json.loads(data)')
    assert.equal(out.error?.line, 3)
    assert.equal(errorOf(out).column, 10)
    assert.match(errorOf(out).message, /^JSONDecodeError/)
    assert.doesNotMatch(errorOf(out).excerpt ?? '', /vis_guest|__vis/)
  })
  test('a failure inside a function from an earlier block says where in it', async () => {
    await g.runBlock('def helper(d):\n    "Divide."\n    return 10 / d')
    const out = await g.runBlock('x = 2\nhelper(0)')
    assert.equal(out.error?.line, 2)
    assert.match(
      out.error?.message ?? '',
      /raised in helper\(\) \(defined in an earlier block\), line 3 of it: return 10 \/ d/,
    )
  })
  test('columns count characters, not bytes', async () => {
    const out = await g.runBlock('s = "ééé"; t = s + 1')
    assert.equal(out.error?.column, 16)
  })
  test('a syntax error has the user line and column', async () => {
    const out = await g.runBlock('x = 1\ny = = 2')
    assert.equal(out.error?.phase, 'syntax')
    assert.equal(errorOf(out).line, 2)
    assert.equal(errorOf(out).column, 5)
    assert.match(errorOf(out).excerpt ?? '', /2 \| y = = 2\n +\| +\^/)
  })
})

describe('hints and flags', () => {
  test('a non-ASCII character in code position is named with its line', async () => {
    const out = await g.runBlock('x = 1\ny = x — 2')
    assert.deepEqual(out.error?.flags, ['non-ascii'])
    assert.match(errorOf(out).message, /line 2 has '—' \(U\+2014 EM DASH\) in code; use ASCII '-'/)
    const quotes = (await g.runBlock('print(“hi”)')).error
    assert.ok(quotes?.flags?.includes('non-ascii'))
    assert.match(quotes?.message ?? '', /U\+201C/)
  })
  test('non-ASCII text inside a string literal is not flagged', async () => {
    const out = await g.runBlock('s = "a — b"; t = = 1')
    assert.equal(out.error?.phase, 'syntax')
    assert.ok(!out.error.flags?.includes('non-ascii'))
  })
  test('a reply that starts with prose is flagged', async () => {
    const out = await g.runBlock("Here is the code to list the files:\nprint(os.listdir('.'))")
    assert.ok(out.error?.flags?.includes('prose'))
    assert.match(errorOf(out).message, /starts with prose/)
    const fence = await g.runBlock('```python\nprint(1)\n```')
    assert.ok(fence.error?.flags?.includes('prose'))
  })
  test('an unbalanced bracket or quote is pinpointed', async () => {
    const out = await g.runBlock('x = 1\nprint((x, 2)\ny = 3')
    assert.ok(out.error?.flags?.includes('unbalanced'))
    assert.equal(errorOf(out).line, 2)
    assert.equal(errorOf(out).column, 6)
    assert.match(errorOf(out).message, /unbalanced quote or bracket at line 2, column 6/)
    const quote = await g.runBlock("s = 'abc\nt = 1")
    assert.ok(quote.error?.flags?.includes('unbalanced'))
    assert.equal(errorOf(quote).line, 1)
  })
  test('an undefined name points at apropos', async () => {
    const out = await g.runBlock('x = 1\nprint(lenght(x))')
    assert.deepEqual(out.error?.flags, ['undefined-name'])
    assert.match(errorOf(out).message, /apropos\('lenght'\)/)
    assert.equal(errorOf(out).line, 2)
  })
  test('an indentation error is flagged', async () => {
    for (const code of ['x = 1\n  y = 2', 'if True:\nx = 1']) {
      const out = await g.runBlock(code)
      assert.equal(out.error?.phase, 'syntax')
      assert.ok(errorOf(out).flags?.includes('indentation'), code)
      assert.equal(errorOf(out).line, 2)
    }
  })
  test('a sandbox denial is worded from the policy', async () => {
    const out = await g.runBlock("f = open('/sys/kernel/notes', 'w')")
    assert.ok(out.error?.flags?.includes('sandbox'))
    assert.match(
      errorOf(out).message,
      new RegExp(
        `access to /sys/kernel/notes was denied: it is outside the approved roots \\(${g.home}\\); use write_file\\(path, text\\) instead`,
      ),
    )
  })
  test('a network denial says the network is off and names the tool to use', async () => {
    for (const code of [
      'import socket\nsocket.create_connection(("93.184.216.34", 80), timeout=2)',
      'import urllib.request\nurllib.request.urlopen("http://example.com", timeout=2)',
    ]) {
      const out = await g.runBlock(code)
      assert.ok(out.error?.flags?.includes('sandbox'), code)
      assert.match(
        out.error?.message ?? '',
        /network access is off for this session; use .*apropos\('http'\).* instead/,
      )
    }
  })
  test('a tool failure has phase host and its line', async () => {
    const out = await g.runBlock('x = 1\nfail()')
    assert.equal(out.error?.phase, 'host')
    assert.equal(errorOf(out).line, 2)
    assert.match(errorOf(out).message, /tool fail failed: disk full/)
  })
})

describe('loop-breaker', () => {
  const loop = /^LOOP: this exact failure happened 3 times in a row/
  test('the third identical failure in a row is prefixed; success resets', async () => {
    const bad = 'x = undefined_thing'
    assert.doesNotMatch((await g.runBlock(bad)).error?.message ?? '', loop)
    assert.doesNotMatch((await g.runBlock(bad)).error?.message ?? '', loop)
    const third = await g.runBlock(bad)
    assert.match(third.error?.message ?? '', loop)
    assert.ok(third.error?.flags?.includes('loop'))
    await g.runBlock('ok = 1')
    assert.doesNotMatch((await g.runBlock(bad)).error?.message ?? '', loop)
    assert.doesNotMatch((await g.runBlock(bad)).error?.message ?? '', loop)
  })
  test('a different failure resets the count', async () => {
    const bad = 'y = also_undefined'
    await g.runBlock(bad)
    await g.runBlock(bad)
    await g.runBlock('1 / 0')
    assert.doesNotMatch((await g.runBlock(bad)).error?.message ?? '', loop)
  })
})
