// Text or binary is decided from the bytes (a NUL, invalid UTF-8) before any magic number names
// the kind: several magic numbers are ASCII words that also start valid source.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { binaryContent, sniffBinary, visibleText } from '../../src/tools/fs/binary.js'

test('text that starts with an ASCII magic number is text', () => {
  for (const head of ['GIF89a = 0\n', 'RIFF=1\n', 'SQLite = 1\n', 'BZh = 2\n', '%PDF = 3\n']) {
    const text = Buffer.from(`${head}import os\nos.system('x')\n`)
    assert.equal(sniffBinary(text), undefined, head)
    assert.equal(binaryContent(text), undefined, head)
  }
})

test('binary files are still named by their magic number', () => {
  const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.from([1, 0, 1, 0, 0x80, 0, 0])])
  assert.equal(sniffBinary(gif), 'GIF image')
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(8)])
  assert.equal(sniffBinary(png), 'PNG image')
  assert.equal(sniffBinary(Buffer.from([0x1f, 0x8b, 8, 0, 0xff])), 'gzip archive')
  assert.equal(sniffBinary(Buffer.from([1, 2, 0, 3])), 'binary data')
  assert.equal(sniffBinary(Buffer.from([0x61, 0xff, 0x62])), 'non-UTF-8 data')
})

test('a sample cut inside a character is text; a whole file ending in half a character is not', () => {
  const cut = Buffer.from('abc é', 'utf8').subarray(0, -1)
  assert.equal(sniffBinary(cut), undefined)
  assert.equal(binaryContent(cut), 'non-UTF-8 data')
})

test('the whole-content rule sees a NUL past the first 8 KiB', () => {
  const data = Buffer.concat([Buffer.from('x = 1\n'.repeat(2000)), Buffer.from([0]), Buffer.from('y\n')])
  assert.equal(sniffBinary(data.subarray(0, 8192)), undefined)
  assert.equal(binaryContent(data), 'binary data')
})

test('text in a legacy encoding is shown whole, each byte outside UTF-8 escaped', () => {
  const latin1 = Buffer.from(
    "# -*- coding: latin-1 -*-\nimport os; os.system('x')\nname = 'Jos\xe9'\n",
    'latin1',
  )
  assert.equal(
    visibleText(latin1),
    "# -*- coding: latin-1 -*-\nimport os; os.system('x')\nname = 'Jos\\xe9'\n",
  )
  // Valid sequences stay characters; overlong forms, surrogates and cut sequences are bytes.
  const mixed = Buffer.from([
    0x61, 0xc3, 0xa9, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xf0, 0x9f, 0x98, 0x80, 0xe2, 0x82,
  ])
  assert.equal(visibleText(mixed), 'aé\\xc0\\xaf\\xed\\xa0\\x80😀\\xe2\\x82')
  assert.equal(visibleText(Buffer.from('plain é\n')), 'plain é\n')
})
