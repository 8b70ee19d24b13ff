// The worker ops beyond blocks: the running block's stdin fed by the host, the network
// tightened for the rest of a session, and the context bound as `session`.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { isSystemVarName, SYSTEM_VAR_NAMES } from '../../src/index.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { isVisError } from '../../src/util/errors.js'
import { python, tempHome } from './helpers.js'

const { home, root } = tempHome('stdin-net')

// Resolves once the session's running block has printed `text` (a prompt input() wrote): the
// block is then in Python, reading.
function printed(s: Session, text: string): Promise<void> {
  let seen = ''
  return new Promise((resolve) => {
    const off = s.on('output', (ev) => {
      seen += ev.data
      if (seen.includes(text)) {
        off()
        resolve()
      }
    })
  })
}

describe('stdin, network and context ops', () => {
  let rt: Runtime
  before(async () => {
    rt = await createRuntime({ home, python, pool: { size: 0 } })
  })
  after(async () => {
    await rt.close()
  })

  test('input() reads what the host writes, and end of input raises EOFError', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      const asked = printed(s, 'who? ')
      const run = s.runBlock(
        'name = input("who? ")\nrest = sys.stdin.read()\ntry:\n    input()\nexcept EOFError:\n    print("eof")\nprint(name, repr(rest))',
      )
      // The block blocks in input() until the host writes; feed it in two pieces.
      await asked
      // The ack counts what waits for the block (the raw request lines, this one included).
      assert.ok((await s.writeStdin('Ada\nLove')).buffered > 0)
      await s.writeStdin('lace\n', { eof: true })
      const r = await run
      assert.equal(r.error, undefined, JSON.stringify(r.error))
      assert.equal(r.stdout, "who? eof\nAda 'Lovelace\\n'\n")
      // Input belongs to its block: the next one starts with none, and reads end of file.
      const next = await s.runBlock('print(repr(sys.stdin.read()))', { stdin: 'given\nlines\n' })
      assert.equal(next.stdout, "'given\\nlines\\n'\n")
      const empty = await s.runBlock('print(repr(sys.stdin.readline()))', { stdin: '' })
      assert.equal(empty.stdout, "''\n")
    } finally {
      await s.dispose()
    }
  })

  test('stdin with no block running is refused, and an interrupt stops a blocked read', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      await assert.rejects(s.writeStdin('x'), (e) => isVisError(e) && e.code === 'session.no-block')
      const asked = printed(s, 'ready> ')
      const run = s.runBlock('input("ready> ")')
      await asked
      assert.equal((await s.interrupt()).landed, true)
      const r = await run
      assert.match(r.error?.message ?? '', /interrupt/i)
      assert.deepEqual(await s.runBlock('print("still here")'), { stdout: 'still here\n' })
    } finally {
      await s.dispose()
    }
  })

  test('network can be turned off for the rest of a session, never back on', async () => {
    const server = createServer((_req, res) => res.end('hello'))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    const port = (server.address() as AddressInfo).port
    const s = await rt.createSession({ roots: [root], network: { enabled: true, allow: ['127.0.0.1'] } })
    const fetch = `import urllib.request\ntry:\n    print(urllib.request.urlopen("http://127.0.0.1:${port}/", timeout=10).read().decode())\nexcept Exception as e:\n    print("failed:", e)`
    try {
      assert.equal((await s.runBlock(fetch)).stdout, 'hello\n', 'through the egress proxy')
      await assert.rejects(
        s.setNetwork({ enabled: true, allow: ['127.0.0.1', '10.0.0.1'] }),
        (e) => isVisError(e) && e.code === 'worker.network-loosen' && /10\.0\.0\.1/.test(e.message),
      )
      const off = await s.setNetwork({ enabled: false })
      assert.equal(off.enabled, false)
      const r = await s.runBlock(fetch)
      assert.match(r.stdout ?? '', /^failed: .*network/i)
      await assert.rejects(
        s.setNetwork({ enabled: true }),
        (e) => isVisError(e) && e.code === 'worker.network-loosen' && /off/.test(e.message),
      )
      assert.match((await s.runBlock(fetch)).stdout ?? '', /^failed:/)
    } finally {
      await s.dispose()
      server.close()
    }
  })

  test('bindContext rebinds `session` now and for later blocks; system names are hidden', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      await s.bindContext({ user: 'ada', n: 2 })
      assert.deepEqual(await s.eval('session'), { ok: true, value: { user: 'ada', n: 2 } })
      assert.equal((await s.runBlock('print(session["user"])')).stdout, 'ada\n')
      assert.equal((await s.runBlock('print(session)', { context: { other: 1 } })).stdout, "{'other': 1}\n")
      assert.equal((await s.runBlock('session = 5\nprint(session)')).stdout, '5\n')
      assert.equal((await s.runBlock('print(session["n"])')).stdout, '2\n', 'rebound before the block')
      assert.deepEqual(await s.callGuest('system_var_names'), [...SYSTEM_VAR_NAMES])
      assert.equal(isSystemVarName('session'), true)
      assert.equal(isSystemVarName('__weird__'), true)
      assert.equal(isSystemVarName('sessions'), false)
    } finally {
      await s.dispose()
    }
  })
})
