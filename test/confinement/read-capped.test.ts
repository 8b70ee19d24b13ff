// readCapped is the only way the host reads a whole file it opened beneath a tree the sandbox
// can write: never more than the cap (plus the one byte that tells "over"), whatever fstat said.
import assert from 'node:assert/strict'
import { closeSync, mkdtempSync, openSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { readCapped } from '../../src/confinement/beneath.js'

test('readCapped: up to the cap is whole; one byte past it is over, with the first cap bytes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vis-read-capped-'))
  const read = async (bytes: number, cap: number) => {
    const file = join(dir, `f${bytes}`)
    writeFileSync(file, Buffer.alloc(bytes, 'a'))
    const fd = openSync(file, 'r')
    try {
      const r = await readCapped(fd, cap)
      return [r.data.length, r.over]
    } finally {
      closeSync(fd)
    }
  }
  assert.deepEqual(await read(0, 10), [0, false])
  assert.deepEqual(await read(10, 10), [10, false])
  assert.deepEqual(await read(11, 10), [10, true])
  assert.deepEqual(await read(200_000, 65_536), [65_536, true])
  assert.deepEqual(await read(200_000, 200_000), [200_000, false])
  assert.deepEqual(await read(5, 0), [0, true])
})
