// The line index (src/tools/fs/line-index.ts) counts and slices lines exactly as splitLines()
// splits them, across its stride, and lets the event loop run while it counts a huge file.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LineIndex } from '../../src/tools/fs/line-index.js'
import { splitLines } from '../../src/tools/fs/lines.js'

const texts = [
  '',
  'a',
  'a\n',
  'a\nb',
  'a\r\nb\r\n',
  '\n\n',
  'x\r',
  'mixed\r\nlf\ncr\r\n\r\nend',
  Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n'),
  `${Array.from({ length: 2049 }, (_, i) => (i % 3 ? `l${i}\r` : '')).join('\n')}\n`,
]

test('total, lines, start and lineAt agree with splitLines on every shape of text', async () => {
  for (const text of texts) {
    const want = splitLines(text).lines
    const index = await LineIndex.of(text)
    const label = JSON.stringify(text.slice(0, 30))
    assert.equal(index.total, want.length, label)
    assert.deepEqual(index.lines(1, index.total), want, label)
    let offset = 0
    for (let k = 1; k <= want.length; k++) {
      assert.equal(index.start(k), offset, `${label} start ${k}`)
      assert.equal(index.lineAt(offset), k, `${label} lineAt ${k}`)
      assert.equal(index.line(k), want[k - 1], `${label} line ${k}`)
      offset = text.indexOf('\n', offset) + 1
    }
  }
})

test('counting 20 million lines lets a timer run in between', async () => {
  const text = '\n'.repeat(20_000_000)
  let ticks = 0
  const timer = setInterval(() => ticks++, 5)
  const index = await LineIndex.of(text)
  clearInterval(timer)
  assert.equal(index.total, 20_000_000)
  assert.deepEqual(index.lines(19_999_999, 20_000_000), ['', ''])
  assert.ok(ticks > 0, 'the event loop ran while the lines were counted')
})
