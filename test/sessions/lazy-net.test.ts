// The guest's socket routing (vis_guest/net.py, which imports socket and selectors) is loaded only in a worker whose network is on; network_probe works in both.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from './helpers.js'

const { home, root } = tempHome('lazy-net')
let rt: Runtime
before(async () => {
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
})

const LOADED =
  'import sys\nprint(sorted(m for m in ("socket", "selectors", "vis_guest.net") if m in sys.modules))'

test('network off: no socket module is loaded; the probe says the network is off; socket still imports', async () => {
  const s = await rt.createSession({ roots: [root] })
  try {
    assert.deepEqual(await s.runBlock(LOADED), { stdout: '[]\n' })
    assert.deepEqual(await s.runBlock('network_probe("https://example.com/")'), {
      stdout:
        'target: https://example.com/\n  network access is off for this session: no rule is consulted\ndecision: refused\n',
    })
    const doc = (await s.eval('network_probe.__doc__')) as { ok: boolean; value: string }
    assert.match(doc.value, /^Shows how this session's network policy judges/)
    // The model's own import is CPython's socket, and the jail has no route out of it.
    const r = await s.runBlock(
      'import socket\nprint(socket.getaddrinfo.__module__)\ntry:\n    socket.create_connection(("93.184.215.14", 80), timeout=2)\nexcept OSError as e:\n    print(type(e).__name__)',
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.match(r.stdout ?? '', /^socket\n(OSError|PermissionError|ConnectionRefusedError|TimeoutError)\n$/)
  } finally {
    await s.dispose()
  }
})

test('network on: the routing is installed before any block, and the probe asks the proxy', async () => {
  const s = await rt.createSession({ roots: [root], network: { enabled: true, allow: ['example.test'] } })
  try {
    assert.deepEqual(await s.runBlock(LOADED), {
      stdout: "['selectors', 'socket', 'vis_guest.net']\n",
    })
    assert.deepEqual(
      await s.runBlock(
        'import socket\nprint(socket.getaddrinfo.__module__, socket.socket.connect.__module__)',
      ),
      { stdout: 'vis_guest.net vis_guest.net\n' },
    )
    const probe = await s.runBlock(
      'network_probe("https://example.test/")\nnetwork_probe("https://other.test/")',
    )
    assert.match(
      probe.stdout ?? '',
      /target: https:\/\/example\.test\/\n(.*\n)*? {2}allow example\.test: matches: allow\n/,
    )
    assert.match(probe.stdout ?? '', /decision: refused: other\.test:443 is not on the allow list/)
  } finally {
    await s.dispose()
  }
})
