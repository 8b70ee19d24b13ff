import assert from 'node:assert/strict'
import { test } from 'node:test'
import { progressPrinter } from '../../src/distribution/progress.js'

function sink(isTTY: boolean) {
  const chunks: string[] = []
  const stream = { isTTY, write: (s: string) => chunks.push(s) > 0 } as unknown as NodeJS.WriteStream
  return { stream, text: () => chunks.join('') }
}

const MB = 1024 * 1024

test('on a TTY a transfer redraws one bar in place, then steps print as lines', () => {
  const s = sink(true)
  const p = progressPrinter(s.stream)
  p({ step: 'download', detail: 'http://x/a.tar.gz', done: 0, total: 4 * MB })
  p({ step: 'download', detail: 'http://x/a.tar.gz', done: 2 * MB, total: 4 * MB })
  // Same percentage: no redraw.
  p({ step: 'download', detail: 'http://x/a.tar.gz', done: 2 * MB + 10, total: 4 * MB })
  p({ step: 'unpack', detail: '/cache' })
  const text = s.text()
  assert.match(text, /\rdownload \[=+ +\] 50% 2\.0 MB \/ 4\.0 MB/)
  // Each redraw clears what a longer line before it left (ESC [K), then the bar ends with a newline.
  assert.match(text, /4\.0 MB( [\d.]+ MB\/s)?\x1b\[K\nunpack: \/cache\n$/)
  assert.equal(text.split('\r').length - 1, 2)
})

test('off a TTY a transfer prints a few plain lines, no carriage returns', () => {
  const s = sink(false)
  const p = progressPrinter(s.stream)
  for (let i = 0; i <= 100; i++) p({ step: 'download', detail: 'http://x/a', done: i * MB, total: 100 * MB })
  const lines = s.text().trimEnd().split('\n')
  assert.equal(s.text().includes('\r'), false)
  assert.equal(lines[0], 'download: http://x/a')
  assert.ok(lines.length <= 7, lines.join('\n'))
  assert.equal(lines.at(-1), 'download: 100.0 MB of 100.0 MB')
})
