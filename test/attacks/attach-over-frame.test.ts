// Issue 30 (second outsider pass): `vis_attach` of more than ~12 MiB (a 17 MiB file, or bytes)
// made the block's result, which carries the attachment base64-encoded, larger than the wire's
// 16 Mi-character frame: the host retired the worker and the session lost its globals. Now a
// block may attach 6 MiB in all (vis_attach, vis_attach_bytes, figures); past it the call
// raises `AttachmentTooLarge` (a ValueError whose `code` is `attachment.too-large`), which the
// block catches and goes on; the worker and its globals stay. The controls: an attachment under
// the cap is stored whole, and a file in the outbox (read by the host from disk) still takes
// larger files.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'

const python = process.env.VIS_PYTHON_VERSION
let engine: Engine
let root: string
const made: string[] = []
const dir = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), `vis-attach-${p}-`))
  made.push(d)
  return d
}

before(async () => {
  root = dir('root')
  engine = await createEngine({ home: dir('home'), python, pool: { size: 0 }, extensions: false })
})
after(async () => {
  await engine?.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

async function run(id: string, code: string) {
  const { block } = await engine.runBlock(id, { code, timeout_ms: 120_000 })
  return block
}

test('a 17 MiB vis_attach is refused as a Python exception; the session and its globals survive', async () => {
  const s = await engine.createSession({ roots: [root] })
  const first = await run(s.id, "import os\nkept = 'still here'\npid = os.getpid()\nprint(pid)")
  assert.equal(first.error, null, JSON.stringify(first.error))

  const big = await run(
    s.id,
    `open('big.bin', 'wb').write(os.urandom(17 << 20))
for attempt in (lambda: vis_attach('big.bin'), lambda: vis_attach_bytes(b'x' * (17 << 20), 'big.txt')):
    try:
        attempt()
        print('attached')
    except ValueError as e:
        print('refused', e.code, type(e).__name__, e)
print('the block went on')`,
  )
  assert.equal(big.error, null, JSON.stringify(big.error))
  const lines = big.stdout.trim().split('\n')
  assert.equal(lines.length, 3, big.stdout)
  assert.match(
    lines[0]!,
    /^refused attachment\.too-large AttachmentTooLarge big\.bin is 17825792 bytes; a block may attach 6291456 bytes in all\. Write a larger file into the outbox/,
  )
  assert.match(lines[1]!, /^refused attachment\.too-large AttachmentTooLarge big\.txt is 17825792 bytes/)
  assert.equal(lines[2], 'the block went on')
  assert.equal(big.attachments.length, 0)

  // Same worker, same globals.
  const next = await run(s.id, 'print(kept, os.getpid() == pid)')
  assert.equal(next.error, null, JSON.stringify(next.error))
  assert.equal(next.stdout, 'still here True\n')
  await engine.closeSession(s.id)
})

test('under the cap an attachment is stored whole; the cap counts the whole block', async () => {
  const s = await engine.createSession({ roots: [root] })
  const b = await run(
    s.id,
    `vis_attach_bytes(b'a' * (4 << 20), 'four.txt')
try:
    vis_attach_bytes(b'b' * (3 << 20), 'three.txt')
except ValueError as e:
    print('refused', e.code, e)`,
  )
  assert.equal(b.error, null, JSON.stringify(b.error))
  assert.match(
    b.stdout,
    /^refused attachment\.too-large three\.txt is 3145728 bytes; a block may attach 6291456 bytes in all \(this block already attached 4194304\)/,
  )
  assert.deepEqual(
    b.attachments.map((a) => [a.name, a.size]),
    [['four.txt', 4 << 20]],
  )
  const { data } = engine.attachment(s.id, b.attachments[0]!.id)
  assert.equal(data.length, 4 << 20)
  await engine.closeSession(s.id)
})

test('a larger file closed in the outbox is still attached', async () => {
  const s = await engine.createSession({ roots: [root] })
  const b = await run(s.id, "open(VIS_OUTBOX + '/big.bin', 'wb').write(b'z' * (17 << 20))")
  assert.equal(b.error, null, JSON.stringify(b.error))
  assert.deepEqual(
    b.attachments.map((a) => [a.name, a.size]),
    [['big.bin', 17 << 20]],
  )
  await engine.closeSession(s.id)
})
