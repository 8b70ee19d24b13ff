// listSummaries (what GET /v1/sessions/{id} reads): the last blocks before a position, each cut in
// the database, on both backends.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { jsonBytes, SESSION_PAGE_BYTES } from '../../src/persistence/json-bytes.js'
import { BACKENDS, openTempStore } from './helpers.js'

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('the last blocks, oldest first, long fields cut and marked, with the count before them', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create({ title: 'sum' })
      const ids: string[] = []
      for (let i = 0; i < 4; i++) {
        const { block } = store.blocks.start({ sessionId: s.id, code: `x = ${i}` })
        store.blocks.finish(block.id, {
          stdout: i === 2 ? 'o'.repeat(50) : `${i}\n`,
          value: i === 2 ? 'v'.repeat(50) : i,
          error: i === 3 ? { code: 'python.error', message: 'e'.repeat(50) } : undefined,
          durationMs: 1,
        })
        ids.push(block.id)
      }
      const last = store.blocks.listSummaries(s.id, {
        beforePosition: 1e9,
        limit: 3,
        maxChars: 20,
        maxBytes: SESSION_PAGE_BYTES,
      })
      assert.deepEqual(
        last.blocks.map((b) => b.id),
        ids.slice(1),
      )
      assert.equal(last.before, 1)
      assert.deepEqual([...last.cut].sort(), [ids[2], ids[3]].sort())
      const [small, cut, failed] = last.blocks
      assert.equal(small!.stdout, '1\n')
      assert.equal(small!.value, 1)
      assert.equal(cut!.stdout, 'o'.repeat(20))
      assert.equal(cut!.value, null)
      assert.match(failed!.error!.message, /too long for the session view/)
      const first = store.blocks.listSummaries(s.id, {
        beforePosition: last.blocks[0]!.position,
        limit: 3,
        maxChars: 20,
        maxBytes: SESSION_PAGE_BYTES,
      })
      assert.deepEqual(
        first.blocks.map((b) => b.id),
        ids.slice(0, 1),
      )
      assert.equal(first.before, 0)
      assert.equal(first.cut.size, 0)
    })

    // Sixteenth outsider pass: the bound is in bytes as sent, where a control character is six.
    test('a page stops where its JSON reaches the byte bound, and the pages cover every block once', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create({ title: 'bytes' })
      const ids: string[] = []
      for (let i = 0; i < 30; i++) {
        const { block } = store.blocks.start({ sessionId: s.id, code: `x = ${i}` })
        store.blocks.finish(block.id, { stdout: '\x01'.repeat(1000), durationMs: 1 })
        ids.push(block.id)
      }
      // 1000 characters, each six bytes of JSON: a page of 64 KiB holds about ten such blocks,
      // though a thousand were asked for and no field is past 2000 characters.
      assert.equal(jsonBytes('\x01'.repeat(1000)), 6002)
      const maxBytes = 64 * 1024
      const seen: string[] = []
      let before = 1e9
      for (let pages = 0; seen.length < ids.length; pages++) {
        assert.ok(pages < 30, 'paging ends')
        const page = store.blocks.listSummaries(s.id, {
          beforePosition: before,
          limit: 1000,
          maxChars: 2000,
          maxBytes,
        })
        assert.ok(page.blocks.length > 1 && page.blocks.length < 15, `${page.blocks.length} blocks in a page`)
        assert.ok(page.bytes <= maxBytes, `${page.bytes} bytes`)
        const stdout = page.blocks.reduce((n, b) => n + jsonBytes(b.stdout), 0)
        assert.ok(stdout <= maxBytes, `${stdout} bytes of output`)
        assert.equal(page.cut.size, 0)
        assert.equal(page.before, ids.length - seen.length - page.blocks.length)
        seen.unshift(...page.blocks.map((b) => b.id))
        before = page.blocks[0]!.position
      }
      assert.deepEqual(seen, ids)
      // The newest block is listed even alone past the bound: paging always moves on.
      const one = store.blocks.listSummaries(s.id, {
        beforePosition: 1e9,
        limit: 5,
        maxChars: 2000,
        maxBytes: 10,
      })
      assert.deepEqual(
        one.blocks.map((b) => b.id),
        ids.slice(-1),
      )
      assert.equal(one.before, ids.length - 1)
    })

    // Seventeenth outsider pass: a page lists each block's attachments (the session view, a
    // transcript's Markdown), names the sandbox chose, and their bytes were not counted.
    test("a page's bytes count its blocks' attachments, names of control characters six bytes each", () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create({ title: 'attachments' })
      const ids: string[] = []
      // A NUL first: SQLite's length() of text stops there, the bytes do not.
      const name = (i: number, j: number) => `\0${'\x01'.repeat(200)}-${i}-${j}`
      for (let i = 0; i < 12; i++) {
        const { block } = store.blocks.start({ sessionId: s.id, code: `x = ${i}` })
        const attachments = Array.from({ length: 20 }, (_, j) => ({
          mediaType: 'text/plain',
          name: name(i, j),
          data: Buffer.from('x'),
        }))
        store.blocks.finish(block.id, { stdout: '', durationMs: 1, attachments })
        ids.push(block.id)
      }
      // Each block's names alone are 20 x ~1200 bytes of JSON: a page of 64 KiB holds two or three
      // blocks, though their fields are a few bytes.
      const maxBytes = 64 * 1024
      const seen: string[] = []
      let before = 1e9
      for (let pages = 0; seen.length < ids.length; pages++) {
        assert.ok(pages < 12, 'paging ends')
        const page = store.blocks.listSummaries(s.id, {
          beforePosition: before,
          limit: 1000,
          maxChars: 2000,
          maxBytes,
        })
        assert.ok(page.blocks.length >= 1 && page.blocks.length < 4, `${page.blocks.length} blocks in a page`)
        const positions = page.blocks.map((b) => b.position)
        const listed = store.attachments.listByBlockPositions(
          s.id,
          Math.min(...positions),
          Math.max(...positions),
        )
        assert.equal(listed.length, 20 * page.blocks.length)
        const names = listed.reduce((n, a) => n + jsonBytes(a.name!) + jsonBytes(a.mediaType), 0)
        assert.ok(page.bytes >= names, `${page.bytes} bytes counted, ${names} of names and media types`)
        assert.ok(page.bytes <= maxBytes || page.blocks.length === 1, `${page.bytes} bytes`)
        seen.unshift(...page.blocks.map((b) => b.id))
        before = page.blocks[0]!.position
      }
      assert.deepEqual(seen, ids)
    })
  })
}
