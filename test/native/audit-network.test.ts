// A policy with network on and an allow list, and with processes allowed.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:net'
import { after, before, test } from 'node:test'
import { loadPython, type PythonRuntime } from '../../src/native/index.js'
import { tempHome } from './helpers.js'

tempHome()
let rt: PythonRuntime
const servers: Server[] = []
const ports: number[] = []

before(async () => {
  for (let i = 0; i < 2; i++) {
    const s = createServer((sock) => sock.end('hello\n'))
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
    servers.push(s)
    ports.push((s.address() as { port: number }).port)
  }
  rt = await loadPython()
  rt.installPolicy({
    readOnly: [],
    readWrite: [],
    network: { enabled: true, allow: [`127.0.0.1:${ports[0]}`, `localhost:${ports[0]}`] },
    processes: true,
    ctypes: false,
  })
})

after(() => {
  for (const s of servers) s.close()
})

test('an allowed endpoint can be reached, by address and by name', async () => {
  const o = await rt.exec(
    `import socket\nwith socket.create_connection(("127.0.0.1", ${ports[0]})) as s:\n    a = s.makefile().readline()\nwith socket.create_connection(("localhost", ${ports[0]})) as s:\n    b = s.makefile().readline()`,
  )
  assert.ok(o.ok, JSON.stringify(o))
  const r = await rt.eval('[a, b]')
  assert.deepEqual(r.ok && r.value, ['hello\n', 'hello\n'])
})

test('an endpoint outside the allow list is refused with a clear message', async () => {
  const o = await rt.exec(`import socket\nsocket.create_connection(("127.0.0.1", ${ports[1]}))`)
  assert.ok(!o.ok)
  if (o.ok) return
  assert.equal(o.error.type, 'PermissionError')
  assert.match(
    o.error.message,
    new RegExp(`'127\\.0\\.0\\.1:${ports[1]}' is not in the sandbox policy's allow list`),
  )
  const name = await rt.exec('import socket\nsocket.getaddrinfo("example.invalid", 443)')
  assert.ok(!name.ok && name.error.type === 'PermissionError')
})

test('processes run when the policy allows them', async () => {
  const o = await rt.exec(
    'import subprocess\nout = subprocess.run(["echo", "hi"], capture_output=True, text=True).stdout',
  )
  assert.ok(o.ok, JSON.stringify(o))
  const r = await rt.eval('out')
  assert.equal(r.ok && r.value, 'hi\n')
})
