// The host end of the wire against a real child process that misbehaves on request.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { isVisError } from '../../src/util/errors.js'
import { Worker } from '../../src/worker/worker.js'
import { normalizePolicy } from '../../src/worker/worker-policy.js'

const peer = fileURLToPath(new URL('./fixtures/wire-peer.mjs', import.meta.url))
const home = mkdtempSync(join(tmpdir(), 'vis-wire-'))
process.env.VIS_HOME = home
process.on('exit', () => rmSync(home, { recursive: true, force: true }))

function start(extra: Partial<Parameters<typeof Worker.start>[0]> = {}): Promise<Worker> {
  return Worker.start({
    home,
    policy: normalizePolicy({}),
    entry: peer,
    confine: false,
    maxFrameChars: 4096,
    ...extra,
  })
}

describe('wire framing and validation', () => {
  let w: Worker
  before(async () => {
    w = await start()
  })
  after(async () => {
    await w.close()
  })

  test('a malformed line is logged and dropped; the worker keeps answering', async () => {
    assert.equal(await w.call('exec', { code: 'malformed' }), 'after-malformed')
    assert.equal(w.wireStats.malformed, 1)
    assert.match(readFileSync(w.logPath, 'utf8'), /dropped a malformed line: \{this is not json/)
    assert.equal(await w.call('exec', { code: 'echo:ok' }), 'ok')
  })

  test('an oversized frame fails the request it answered and nothing else', async () => {
    await assert.rejects(w.call('exec', { code: 'oversized:10000' }), (e) =>
      isVisError(e, 'protocol.frame-too-large'),
    )
    assert.equal(w.wireStats.oversized, 1)
    // Just under the cap still passes, and the stream is still in sync afterwards.
    assert.equal(((await w.call('exec', { code: 'oversized:3000' })) as string).length, 3000)
    assert.equal(await w.call('exec', { code: 'echo:in-sync' }), 'in-sync')
  })

  test('a frame nested past the cap is refused', async () => {
    await assert.rejects(w.call('exec', { code: 'deep:200' }), (e) => isVisError(e, 'protocol.too-deep'))
    assert.deepEqual(await w.call('exec', { code: 'deep:3' }), [[[0]]])
  })

  test('an unknown op from the child is answered with an error, not a crash', async () => {
    const r = (await w.call('exec', { code: 'unknown-op' })) as { ok: boolean; error: { code: string } }
    assert.equal(r.ok, false)
    assert.equal(r.error.code, 'protocol.unknown-op')
    assert.equal(w.wireStats.unknownOp, 1)
  })

  test("the child's error codes are checked against the catalogue", async () => {
    // A catalogued code arrives as itself, the reply's extra fields in the context.
    await assert.rejects(w.call('exec', { code: 'fail:python.exception' }), (e) => {
      assert.ok(isVisError(e, 'python.exception'))
      assert.equal(e.context.detail, 'kept')
      return true
    })
    // One the catalogue lacks is a bug in the child: said as such, its code kept for the log.
    await assert.rejects(w.call('exec', { code: 'fail:made.up-code' }), (e) => {
      assert.ok(isVisError(e, 'protocol.unknown-error'), String(e))
      assert.equal(e.context.peerCode, 'made.up-code')
      assert.equal(e.message, 'failed on request')
      return true
    })
    assert.equal(await w.call('exec', { code: 'echo:after' }), 'after')
  })

  test('a host call with a bad envelope is refused by the schema', async () => {
    const r = (await w.call('exec', { code: 'bad-host' })) as {
      ok: boolean
      error: { code: string; message: string }
    }
    assert.equal(r.ok, false)
    assert.equal(r.error.code, 'protocol.invalid')
    assert.match(r.error.message, /args/)
  })

  test('a session that never bound a tool gets a refusal that says so', async () => {
    const r = (await w.call('exec', { code: 'host:grep' })) as {
      ok: boolean
      error: { code: string; message: string }
    }
    assert.equal(r.error.code, 'tool.unbound')
    assert.match(r.error.message, /grep/)
  })

  test('a reply to a request never made is logged and dropped', async () => {
    assert.equal(await w.call('exec', { code: 'stray' }), 'after-stray')
    assert.equal(w.wireStats.strayReplies, 1)
    assert.match(readFileSync(w.logPath, 'utf8'), /reply to request 424242, which was never made/)
  })

  test('a second (late) reply is dropped, never delivered to the next request', async () => {
    assert.equal(await w.call('exec', { code: 'twice' }), 'first')
    assert.equal(await w.call('exec', { code: 'echo:mine' }), 'mine')
    assert.equal(w.wireStats.lateReplies, 1)
  })

  test('unknown notifications are dropped; output notifications reach listeners', async () => {
    const seen: string[] = []
    const off = w.on('output', (ev) => seen.push(ev.data))
    assert.equal(await w.call('exec', { code: 'notify-unknown' }), 'after-notify')
    off()
    assert.deepEqual(seen, ['chunk\n'])
    assert.ok(w.wireStats.unknownOp >= 1)
  })
})

describe('worker lifecycle over the wire', () => {
  test('an interrupt the child never acknowledges retires it within the bound', async () => {
    const w = await start({ interruptAckMs: 300, env: { WIRE_PEER_NO_ACK: '1' } })
    const hung = w.send('exec', { code: 'hang' })
    const t0 = performance.now()
    const r = await w.interrupt(hung.id)
    const ms = performance.now() - t0
    assert.deepEqual(r, { landed: false, retired: true })
    assert.ok(ms < 2000, `retired after ${ms} ms`)
    await assert.rejects(hung.reply, (e) => isVisError(e, 'worker.retired'))
    await w.waitExit()
    assert.throws(() => process.kill(w.pid, 0))
    await assert.rejects(w.call('exec', { code: 'echo:x' }), (e) => isVisError(e, 'worker.retired'))
  })

  test('an acknowledged interrupt fails the hung call and the worker stays usable', async () => {
    const w = await start()
    const hung = w.send('exec', { code: 'hang' })
    assert.deepEqual(await w.interrupt(hung.id), { landed: true, retired: false })
    await assert.rejects(hung.reply, (e) => isVisError(e, 'python.interrupted'))
    assert.equal(await w.call('exec', { code: 'echo:still-here' }), 'still-here')
    await w.close()
  })

  test('a child that dies fails every pending call with the tail of its log', async () => {
    const w = await start()
    const a = w.send('exec', { code: 'hang' })
    const b = w.send('exec', { code: 'crash' })
    for (const p of [a.reply, b.reply]) {
      await assert.rejects(
        p,
        (e) => isVisError(e, 'worker.died') && /about to die/.test((e as Error).message),
      )
    }
    assert.equal(w.state, 'exited')
  })
})
