// ATTACK (surface 1, egress: "absolute-URI proxy requests with a Host header that disagrees"):
// the egress proxy judges an absolute-URI request by the URI's authority, then forwards the
// client's own Host header unchanged. The destination therefore sees a host the policy never
// judged: behind one allowed address or name sit many virtual hosts (a shared ingress, a CDN, a
// local nginx), and `Host: admin.internal` reaches one the allow list does not name, with the
// allowed name's rules (read-only, paths) applied to the wrong site. Forward proxies that filter
// (Squid's host_verify_strict) refuse a Host that disagrees with the URI, or rewrite it.
// Here: a host listener on 127.0.0.1:PORT allowed by its IP entry; the block sends
// `GET http://127.0.0.1:PORT/ HTTP/1.1` with `Host: admin.internal:8080` straight to the relay.
// On the current code the listener receives `Host: admin.internal:8080`.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

let rt: Runtime
let srv: Server
let port = 0
const seen: string[] = []
const root = mkdtempSync(join(tmpdir(), 'vis-attack-hosthdr-'))
before(async () => {
  const { home } = tempHome('attack-host-header')
  srv = createServer((req, res) => {
    seen.push(String(req.headers.host))
    res.end('ok\n')
  })
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', () => res()))
  port = (srv.address() as { port: number }).port
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  srv.close()
  rmSync(root, { recursive: true, force: true })
})

test('the proxy never forwards a Host header other than the authority it judged', async () => {
  const s = await rt.createSession({
    roots: [root],
    network: { enabled: true, allow: [`127.0.0.1:${port}`] },
  })
  try {
    const r = await s.runBlock(
      `import socket
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'GET http://127.0.0.1:${port}/ HTTP/1.1\\r\\nHost: admin.internal:8080\\r\\nConnection: close\\r\\n\\r\\n')
s.settimeout(10)
out = b''
while True:
    c = s.recv(65536)
    if not c: break
    out += c
print(out.split(b'\\r\\n')[0].decode())`,
      { timeoutMs: 30_000 },
    )
    assert.equal(r.error ?? null, null, JSON.stringify(r.error))
    assert.ok(
      seen.every((h) => h === `127.0.0.1:${port}`),
      `the destination received Host headers the policy never judged: ${JSON.stringify(seen)} (${r.stdout?.trim()})`,
    )
  } finally {
    await s.dispose()
  }
})
