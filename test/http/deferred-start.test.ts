// A sync block's row is stored with its finish (issue 15 §5, one commit per short block), yet
// nothing acknowledged or running is ever missing: a long sync block is stored while it runs
// (listed, and abandoned after a SIGKILL), an async block is on disk before its 202, a queued
// block can be cancelled, and positions follow submission order.
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, python, spawnServe, tempHome, waitFor } from './helpers.js'

const { home } = tempHome('http-deferred-start')
const dbPath = join(home, 'vis.db')

// Commits in the WAL: a frame whose header carries the database size after the commit (bytes
// 4..7, non-zero) ends a transaction (https://sqlite.org/fileformat.html, "WAL file format").
function walCommits(wal: string): { frames: number; commits: number } {
  if (!existsSync(wal) || statSync(wal).size < 32) return { frames: 0, commits: 0 }
  const fd = openSync(wal, 'r')
  try {
    const head = Buffer.alloc(32)
    readSync(fd, head, 0, 32, 0)
    const pageSize = head.readUInt32BE(8)
    const salt = [head.readUInt32BE(16), head.readUInt32BE(20)]
    const size = statSync(wal).size
    const frame = Buffer.alloc(24)
    let frames = 0
    let commits = 0
    for (let at = 32; at + 24 + pageSize <= size; at += 24 + pageSize) {
      readSync(fd, frame, 0, 24, at)
      // Frames left from before the WAL restarted carry another salt: not part of this log.
      if (frame.readUInt32BE(8) !== salt[0] || frame.readUInt32BE(12) !== salt[1]) break
      frames++
      if (frame.readUInt32BE(4) !== 0) commits++
    }
    return { frames, commits }
  } finally {
    closeSync(fd)
  }
}

// Another connection, as the CLI or a cluster node would read the database.
function rowOf(blockId: string, file = dbPath): { status: string; position: number } | undefined {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    return db.prepare('SELECT status, position FROM blocks WHERE id = ?').get(blockId) as
      | { status: string; position: number }
      | undefined
  } finally {
    db.close()
  }
}

function blockIdsOf(sessionId: string): { id: string; status: string; position: number }[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true })
  try {
    return db
      .prepare('SELECT id, status, position FROM blocks WHERE session_id = ? ORDER BY position')
      .all(sessionId) as { id: string; status: string; position: number }[]
  } finally {
    db.close()
  }
}

const LONG = 'import time\nwhile not globals().get("stop"):\n    time.sleep(0.01)'

describe('deferred block rows, in process', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    server = await startServer({ home, python, port: 0, pool: { size: 1 } })
    call = client(server.url)
  })
  after(async () => {
    await server?.close()
  })

  test('a short sync block is one commit: its row, outcome and events together', async () => {
    // Its own server whose event batches wait for no timer: a block slower than the 15 ms flush
    // (a loaded machine) has its running row stored by the timer first, which is two commits.
    const own = mkdtempSync(join(tmpdir(), 'vis-deferred-one-commit-'))
    const ownDb = join(own, 'vis.db')
    const one = await startServer({ home: own, python, port: 0, pool: { size: 1 }, eventFlushMs: 600_000 })
    try {
      const call1 = client(one.url)
      const id = (await call1('POST', '/v1/sessions', {})).body.id
      // Warm: the worker is up, the first block's defs are stored.
      assert.equal((await call1('POST', `/v1/sessions/${id}/blocks`, { code: 'y = 0' })).body.error, null)
      const counts: number[] = []
      for (let i = 0; i < 3; i++) {
        // Folds the WAL back into the database so the next block's frames are all that is in it.
        const db = new Database(ownDb, { fileMustExist: true })
        db.pragma('wal_checkpoint(TRUNCATE)')
        db.close()
        assert.equal(walCommits(`${ownDb}-wal`).commits, 0)
        const r = await call1('POST', `/v1/sessions/${id}/blocks`, { code: `x = ${i}` })
        assert.equal(r.status, 200)
        assert.equal(r.body.status, 'done')
        counts.push(walCommits(`${ownDb}-wal`).commits)
        // What the response said is what is stored, position included.
        assert.deepEqual(rowOf(r.body.id, ownDb), { status: 'done', position: r.body.position })
      }
      assert.deepEqual(counts, [1, 1, 1], 'commits per block')
    } finally {
      await one.close()
    }
  })

  test('an async block is on disk before its 202, and says its stored position', async () => {
    const id = (await call('POST', '/v1/sessions', {})).body.id
    const r = await call('POST', `/v1/sessions/${id}/blocks`, { code: LONG }, { prefer: 'respond-async' })
    assert.equal(r.status, 202)
    assert.deepEqual(rowOf(r.body.id), { status: 'running', position: r.body.position })
    await call('POST', `/v1/sessions/${id}/interrupt`, { block_id: r.body.id })
  })

  test('a long sync block is stored while it runs; a queued one behind it can be cancelled', async () => {
    const id = (await call('POST', '/v1/sessions', {})).body.id
    const long = call('POST', `/v1/sessions/${id}/blocks`, { code: LONG })
    // Stored by the event log's flush timer, seen by another connection, without any reader here.
    await waitFor(() => blockIdsOf(id).length === 1, 20_000, 'the running block row')
    const [row] = blockIdsOf(id)
    assert.equal(row!.status, 'running')
    const queued = call('POST', `/v1/sessions/${id}/blocks`, { code: 'x = "never"' })
    await waitFor(() => blockIdsOf(id).length === 2, 20_000, 'the queued block row')
    const listed = (await call('GET', `/v1/sessions/${id}`)).body.blocks
    assert.deepEqual(
      listed.map((b: { status: string }) => b.status),
      ['running', 'queued'],
    )
    assert.ok(listed[1].position > listed[0].position, 'positions follow submission order')
    const cancelled = await call('POST', `/v1/sessions/${id}/blocks/${listed[1].id}/cancel`)
    assert.equal(cancelled.status, 200)
    const q = await queued
    assert.equal(q.body.id, listed[1].id)
    assert.equal(q.body.error.code, 'block.cancelled')
    await call('POST', `/v1/sessions/${id}/interrupt`, { block_id: row!.id })
    const l = await long
    assert.equal(l.body.id, row!.id)
    assert.equal(l.body.status, 'done')
  })

  test('a block with an Idempotency-Key after a deferred one still gets the later position', async () => {
    const id = (await call('POST', '/v1/sessions', {})).body.id
    const first = call('POST', `/v1/sessions/${id}/blocks`, { code: 'import time\ntime.sleep(0.3)' })
    const keyed = await call(
      'POST',
      `/v1/sessions/${id}/blocks`,
      { code: '1 + 1' },
      { 'idempotency-key': 'deferred-order-1', prefer: 'respond-async' },
    )
    assert.equal(keyed.status, 202)
    const a = await first
    assert.ok(keyed.body.position > a.body.position, `${a.body.position} < ${keyed.body.position}`)
    assert.deepEqual(
      blockIdsOf(id).map((b) => b.id),
      [a.body.id, keyed.body.id],
    )
  })
})

describe('deferred block rows across a SIGKILL', () => {
  const children: ChildProcess[] = []
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  })
  const env = { ...process.env, VIS_HOME: home, VIS_TOKEN: 'deferred-start-token' }
  const auth = { authorization: 'Bearer deferred-start-token' }
  const serve = async () => {
    const args = ['--pool', '1', ...(python ? ['--python', python] : [])]
    const s = await spawnServe(args, env)
    children.push(s.child)
    const url = /serving (http:\/\/\S+)/.exec(s.out())?.[1]
    assert.ok(url, `vis serve: ${s.err()}`)
    return { child: s.child, call: client(url, auth) }
  }

  test('a long sync block killed mid-run is abandoned on restart, not lost', async () => {
    const first = await serve()
    const id = (await first.call('POST', '/v1/sessions', {})).body.id as string
    void first.call('POST', `/v1/sessions/${id}/blocks`, { code: LONG }).catch(() => undefined)
    await waitFor(() => blockIdsOf(id).some((b) => b.status === 'running'), 30_000, 'the running row')
    const [running] = blockIdsOf(id)
    const gone = new Promise((r) => first.child.once('exit', r))
    first.child.kill('SIGKILL')
    await gone
    const second = await serve()
    const got = await second.call('GET', `/v1/sessions/${id}/blocks/${running!.id}`)
    assert.equal(got.status, 200)
    assert.equal(got.body.status, 'done')
    assert.equal(got.body.error.code, 'block.abandoned')
    second.child.kill('SIGTERM')
    await new Promise((r) => second.child.once('exit', r))
  })
})
