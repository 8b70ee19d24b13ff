// A worker without the OS jail (`confine: false`) has no egress proxy: its audit hook is the
// only network check, so the policy's rules and deny list must reach the hook or the worker
// must be refused. Real unjailed workers, a real listener on loopback, real connects.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { NetworkEntryInput } from '../../src/contracts/network-policy.js'
import { isVisError } from '../../src/util/errors.js'
import { Worker } from '../../src/worker/worker.js'
import { normalizePolicy } from '../../src/worker/worker-policy.js'

const home = mkdtempSync(join(tmpdir(), 'vis-unjailed-net-'))
process.env.VIS_HOME = home
let server: Server
let port = 0

before(async () => {
  server = createServer((sock) => sock.end('hello\n'))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as { port: number }).port
})
after(() => {
  server.close()
  rmSync(home, { recursive: true, force: true })
})

const start = (allow: NetworkEntryInput[], deny: string[] = []) =>
  Worker.start({
    home,
    policy: normalizePolicy({ network: { enabled: true, allow, deny } }),
    confine: false,
    python: process.env.VIS_PYTHON_VERSION,
  })

// Connects to the listener from a block; the hook's refusal is a PermissionError.
async function connect(w: Worker): Promise<{ ok: boolean; error?: { type: string; message: string } }> {
  const code = `import socket\nwith socket.create_connection(("127.0.0.1", ${port}), timeout=5) as s:\n    got = s.makefile().readline()`
  return (await w.call('exec', { code })) as { ok: boolean; error?: { type: string; message: string } }
}

test('a deny entry the hook cannot apply refuses the worker instead of being dropped', async () => {
  // Before: the hook got allow ['*'] with no deny list, and the block reached 127.0.0.1.
  await assert.rejects(
    start(['*'], ['127.0.0.1']),
    (e) =>
      isVisError(e, 'policy.audit-unexpressible') &&
      /'127\.0\.0\.1' refusing part of what '\*' allows/.test((e as Error).message) &&
      /run the session jailed/.test((e as Error).message),
  )
})

test("an access 'none' rule refuses its host in the hook", async () => {
  // Before: rule objects were dropped, and '127.0.0.1' alone stayed on the hook's list.
  const w = await start([`127.0.0.1:${port}`, { host: '127.0.0.1', access: 'none' }])
  try {
    const o = await connect(w)
    assert.equal(o.ok, false)
    assert.equal(o.error?.type, 'PermissionError')
    assert.match(o.error?.message ?? '', /network access is disabled by the sandbox policy/)
  } finally {
    await w.close()
  }
})

test('a full-access rule object allows its host in the hook', async () => {
  // Before: a list of rule objects reached the hook as an empty list, which refused everything.
  const w = await start([{ host: `127.0.0.1:${port}`, access: 'full' }])
  try {
    const o = await connect(w)
    assert.ok(o.ok, JSON.stringify(o))
    const other = (await w.call('exec', {
      code: `import socket\nsocket.create_connection(("127.0.0.1", ${port + 1 === 65536 ? 1 : port + 1}))`,
    })) as { ok: boolean; error?: { type: string; message: string } }
    assert.equal(other.error?.type, 'PermissionError', 'another port stays refused')
    assert.match(other.error?.message ?? '', /is not in the sandbox policy's allow list/)
  } finally {
    await w.close()
  }
})
