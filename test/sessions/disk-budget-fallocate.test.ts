// fallocate(2) reserves blocks without writing them, faster than the disk budget is checked
// (every 250 ms while a block runs). The worker's seccomp filter (and each shell call's tool
// jail, which installs the same filter) answers it with EOPNOTSUPP: native code and tools see
// that errno, glibc's posix_fallocate falls back to writing the blocks (as bounded as any
// write), and Python's os.posix_fallocate / os.fallocate refuse with a readable reason first.
// Punching a hole only frees blocks and stays allowed.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { python, tempHome } from './helpers.js'

const { home, root } = tempHome('fallocate')
let e: Engine
before(async () => {
  e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
})
after(async () => {
  await e?.close()
  rmSync(root, { recursive: true, force: true })
})

const block = async (id: string, code: string) => {
  const r = await e.runBlock(id, { code, timeout_ms: 60_000 })
  assert.equal(r.block.error, null, JSON.stringify(r.block.error))
  return JSON.parse(r.block.stdout)
}

test('Python: os.posix_fallocate refuses with EOPNOTSUPP and the reason, reserving nothing; writing works', async () => {
  const s = await e.createSession({ roots: [root] })
  const out = await block(
    s.id,
    `import os, json, errno
fd = os.open('py.bin', os.O_CREAT | os.O_RDWR, 0o600)
try:
    os.posix_fallocate(fd, 0, 64 << 20)
    res = 'reserved'
except OSError as e:
    res = [e.errno == errno.EOPNOTSUPP, str(e)]
blocks = os.fstat(fd).st_blocks
os.write(fd, b'x' * (1 << 20))
print(json.dumps([res, blocks, os.fstat(fd).st_size]))`,
  )
  const [res, blocks, size] = out
  assert.equal(res[0], true, JSON.stringify(out))
  assert.match(res[1], /os\.posix_fallocate: reserving disk space ahead of writing is refused in the sandbox/)
  assert.equal(blocks, 0)
  assert.equal(size, 1 << 20)
})

// The kernel layer, reached by native code (util-linux's fallocate calls fallocate(2) itself):
// the tool jail installs the worker's filter (the catalogue's disk.fallocate-raw case checks
// the worker's own, from ctypes under the direct jail).
test("the shell's tool jail: util-linux fallocate fails with 'Operation not supported'; writing the file works", async () => {
  const s = await e.createSession({ roots: [root], shell: true })
  const out = await block(
    s.id,
    `import json, os
r = await shell('fallocate -l 64M jail.bin; echo "exit=$?"; head -c 1048576 /dev/zero > wrote.bin; echo "wrote=$?"; sync wrote.bin; fallocate -p -o 0 -l 1M wrote.bin; echo "punched=$?"')
print(json.dumps([r['stdout'], r['stderr'], os.stat('jail.bin').st_blocks, os.stat('wrote.bin').st_size, os.stat('wrote.bin').st_blocks]))`,
  )
  const [stdout, stderr, blocks, wrote, left] = out
  assert.match(stdout, /exit=1/)
  assert.match(stderr, /Operation not supported/)
  assert.equal(blocks, 0)
  assert.match(stdout, /wrote=0/)
  assert.equal(wrote, 1 << 20)
  // A hole punch only frees blocks: allowed.
  assert.match(stdout, /punched=0/)
  assert.equal(left, 0)
})
