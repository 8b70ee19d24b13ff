import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { isVisError } from '../../src/util/errors.js'
import { openTempStore } from './helpers.js'

const FLOOR = 1024
const bytes = (n: number, seed: number): Buffer =>
  Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff))
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

function finishedWith(attachments: { mediaType: string; name?: string; data: Buffer }[]) {
  const store = openTempStore({ inlineFloorBytes: FLOOR })
  const s = store.sessions.create()
  const { block } = store.blocks.start({ sessionId: s.id, code: 'save()' })
  store.blocks.finish(block.id, { durationMs: 5, attachments })
  return { store, session: s, list: store.attachments.listByBlock(block.id), blockId: block.id }
}

test('small attachments and images of any size stay inline; big non-images go to the file store', () => {
  const small = bytes(FLOOR, 1)
  const image = bytes(FLOOR * 8, 2)
  const big = bytes(FLOOR * 8 + 1, 3)
  const { store, list } = finishedWith([
    { mediaType: 'text/plain', name: 'small.txt', data: small },
    { mediaType: 'image/png', name: 'plot.png', data: image },
    { mediaType: 'application/octet-stream', name: 'big.bin', data: big },
  ])
  assert.deepEqual(
    list.map((a) => [a.position, a.name, a.storage, a.size]),
    [
      [1, 'small.txt', 'inline', small.length],
      [2, 'plot.png', 'inline', image.length],
      [3, 'big.bin', 'file', big.length],
    ],
  )
  const file = list[2]!
  assert.equal(file.storageUri, `vis-blob:sha256/${sha(big)}`)
  const onDisk = join(store.home, 'blobs', 'sha256', sha(big).slice(0, 2), sha(big).slice(2))
  assert.deepEqual(readFileSync(onDisk), big)
  // No temp file is left beside it.
  assert.deepEqual(readdirSync(join(onDisk, '..')), [sha(big).slice(2)])
  const rows = store.db.prepare('SELECT id, data IS NULL AS no_data FROM attachments ORDER BY position').all()
  assert.deepEqual(
    rows.map((r) => (r as { no_data: number }).no_data),
    [0, 0, 1],
  )
  for (const [i, data] of [small, image, big].entries()) {
    const got = store.attachments.read(list[i]!.id)
    assert.deepEqual(got.data, data)
    assert.equal(got.attachment.sha256, sha(data))
  }
})

test('identical big attachments share one stored file', () => {
  const big = bytes(FLOOR * 4, 9)
  const { store, list } = finishedWith([
    { mediaType: 'text/csv', data: big },
    { mediaType: 'text/csv', data: Buffer.from(big) },
  ])
  assert.equal(list[0]!.storageUri, list[1]!.storageUri)
  assert.deepEqual(readdirSync(join(store.home, 'blobs', 'sha256')), [sha(big).slice(0, 2)])
})

test('a damaged or missing store file is reported, never returned as the attachment', () => {
  const big = bytes(FLOOR * 4, 5)
  const { store, list } = finishedWith([{ mediaType: 'text/csv', data: big }])
  const onDisk = join(store.home, 'blobs', 'sha256', sha(big).slice(0, 2), sha(big).slice(2))
  const flipped = Buffer.from(big)
  flipped[10] = flipped[10]! ^ 0xff
  writeFileSync(onDisk, flipped)
  assert.throws(
    () => store.attachments.read(list[0]!.id),
    (e: unknown) => isVisError(e, 'db.blob-corrupt'),
  )
  writeFileSync(onDisk, '')
  assert.throws(
    () => store.attachments.read(list[0]!.id),
    (e: unknown) => isVisError(e, 'db.blob-corrupt'),
  )
  assert.throws(
    () => store.attachments.read('att_nope'),
    (e: unknown) => isVisError(e, 'db.attachment-not-found'),
  )
})

test('garbage collection removes files no row references once they are older than the grace period', () => {
  const keep = bytes(FLOOR * 2, 7)
  const orphan = bytes(FLOOR * 2, 8)
  const { store, session, blockId } = finishedWith([{ mediaType: 'text/plain', data: keep }])
  // A failed finish (the block is already done) wrote its file first, then the transaction refused the row.
  assert.throws(
    () =>
      store.blocks.finish(blockId, {
        durationMs: 1,
        attachments: [{ mediaType: 'text/plain', data: orphan }],
      }),
    (e: unknown) => isVisError(e, 'db.block-finished'),
  )
  const orphanPath = join(store.home, 'blobs', 'sha256', sha(orphan).slice(0, 2), sha(orphan).slice(2))
  const keepPath = join(store.home, 'blobs', 'sha256', sha(keep).slice(0, 2), sha(keep).slice(2))
  assert.ok(existsSync(orphanPath))
  assert.equal(store.attachments.collectGarbage(60_000), 0, 'fresh files are spared')
  assert.equal(store.attachments.collectGarbage(0), 1)
  assert.ok(!existsSync(orphanPath))
  assert.ok(existsSync(keepPath))
  store.sessions.delete(session.id)
  const old = (Date.now() - 120_000) / 1000
  utimesSync(keepPath, old, old)
  assert.equal(store.attachments.collectGarbage(60_000), 1)
  assert.ok(!existsSync(keepPath))
  assert.ok(statSync(join(store.home, 'blobs', 'sha256')).isDirectory())
})

test('attachments are validated at the boundary', () => {
  const store = openTempStore()
  const s = store.sessions.create()
  const { block } = store.blocks.start({ sessionId: s.id, code: '' })
  assert.throws(
    () => store.attachments.add(block.id, [{ mediaType: 'not a type', data: Buffer.from('x') }]),
    (e: unknown) => isVisError(e, 'db.invalid-input') && /mediaType/.test(e.message),
  )
  assert.throws(
    () => store.attachments.add('blk_nope', [{ mediaType: 'text/plain', data: Buffer.from('x') }]),
    (e: unknown) => isVisError(e, 'db.block-not-found'),
  )
  const [added] = store.attachments.add(block.id, [
    { mediaType: 'text/plain', data: new Uint8Array([104, 105]) },
  ])
  assert.equal(store.attachments.read(added!.id).data.toString(), 'hi')
})

// On PostgreSQL the file store (per vis home) is not shared by a cluster's nodes, so every
// attachment stays inline in bytea, whatever inlineFloorBytes says; reads are the same bytes.
test('on PostgreSQL every attachment stays inline, big non-images too, and reads back whole', () => {
  const big = bytes(FLOOR * 64, 4)
  const store = openTempStore({ inlineFloorBytes: FLOOR }, 'postgres')
  const s = store.sessions.create()
  const { block } = store.blocks.start({ sessionId: s.id, code: 'save()' })
  store.blocks.finish(block.id, {
    durationMs: 5,
    attachments: [
      { mediaType: 'application/octet-stream', name: 'big.bin', data: big },
      { mediaType: 'text/plain', data: Buffer.from('') },
    ],
  })
  const list = store.attachments.listByBlock(block.id)
  assert.deepEqual(
    list.map((a) => [a.name, a.storage, a.size, a.storageUri]),
    [
      ['big.bin', 'inline', big.length, null],
      [null, 'inline', 0, null],
    ],
  )
  assert.equal(existsSync(join(store.home, 'blobs')), false)
  const got = store.attachments.read(list[0]!.id)
  assert.ok(Buffer.isBuffer(got.data))
  assert.deepEqual(got.data, big)
  assert.equal(got.attachment.sha256, sha(big))
  assert.deepEqual(store.attachments.read(list[1]!.id).data, Buffer.alloc(0))
  assert.equal(store.attachments.collectGarbage(0), 0)
})
