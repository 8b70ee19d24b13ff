// jsonBytes: what a text weighs as a JSON string in UTF-8, the measure of the session page's byte
// bound (json-bytes.ts), counted without building the JSON. It must agree with JSON.stringify.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { jsonBytes } from '../../src/persistence/json-bytes.js'

test('jsonBytes is the UTF-8 length of JSON.stringify for every kind of character', () => {
  const samples = [
    '',
    'plain ascii',
    '"quoted" \\ back',
    '\b\f\n\r\t',
    '\x00\x01\x1f\x7f',
    'é ß ǿ',
    '€ 中文 \u2028\u2029',
    '😀 pair',
    'lone \ud800 high',
    'lone \udc00 low',
    'high at end \udbff',
    '\udbff\udfff',
  ]
  for (const s of samples) assert.equal(jsonBytes(s), Buffer.byteLength(JSON.stringify(s)), JSON.stringify(s))
  // Every code unit alone.
  for (let c = 0; c < 0x10000; c++) {
    const s = String.fromCharCode(c)
    assert.equal(jsonBytes(s), Buffer.byteLength(JSON.stringify(s)), `U+${c.toString(16)}`)
  }
})
