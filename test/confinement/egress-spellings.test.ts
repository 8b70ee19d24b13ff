// Issue 30 §1: the host's loopback (and the vis server's own port) spelled as IPv6 forms that
// carry an IPv4 address, with zone ids, upper case, leading zeros, inet_aton tails... A jailed
// block tries each through every way off its namespace: a raw CONNECT sent to the relay, an
// ordinary socket.connect (the guest's shim tunnels it), and plain http:// through the proxy.
// Each must be refused, naming loopback (or the server's port), and the listener never reached.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { startServer, type VisServer } from '../../src/http/server.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { python, tempHome } from '../sessions/helpers.js'
import { runLabBlock } from './lab/guest.js'

const { home, root } = tempHome('egress-spellings')

// Every spelling of 127.0.0.1 (or of the host's loopback) that some parser would take.
const LOOPBACK_SPELLINGS = [
  '0::ffff:7f00:1',
  '0:0:0:0:0:ffff:7f00:1',
  '0:0:0:0:0:ffff:127.0.0.1',
  '0000:0000:0000:0000:0000:FFFF:7F00:0001',
  '::FFFF:7F00:1',
  '::ffff:7f00:1%lo',
  '::ffff:7f00:1%1',
  '::ffff:127.0.0.1%25lo',
  '::7f00:1',
  '::127.0.0.1',
  '::ffff:0:7f00:1',
  '::ffff:0:127.0.0.1',
  '::ffff:127.1',
  '::ffff:0x7f.1',
  '0:0:0:0:0:0:0:1',
  '::0001',
  '::1%lo',
]
// IPv4 spellings (no brackets in a CONNECT line).
const V4_SPELLINGS = ['127.0.0.1.', '2130706433', '0x7f.1', '0177.0.0.1', '127.1']

describe('IPv6 (and IPv4) spellings of the host loopback through the egress proxy', () => {
  let rt: Runtime
  let trap: Server
  let port = 0
  let hits = 0
  const sessions: Session[] = []

  before(async () => {
    // Answers at once and leaves the closing to its client, so the answer is never reset away.
    trap = createServer((s) => {
      hits++
      s.on('error', () => undefined)
      s.resume()
      s.write('trap')
    })
    // Dual-stack: a spelling that got through on either family lands here.
    await new Promise<void>((r) => trap.listen(0, '::', () => r()))
    port = (trap.address() as { port: number }).port
    rt = await createRuntime({ home, python, pool: { size: 0 } })
  })
  after(async () => {
    for (const s of sessions) await s.dispose().catch(() => undefined)
    await rt?.close()
    trap?.close()
  })

  async function session(allow: string[], shell = false): Promise<Session> {
    const s = await rt.createSession({ roots: [root], shell, network: { enabled: true, allow, deny: [] } })
    sessions.push(s)
    return s
  }

  // The block: for each spelling, a raw CONNECT to the relay, socket.connect, and urllib.
  const attack = (spellings: string[], v4: string[], target: number) => `
RELAY = ("127.0.0.1", int(os.environ["VIS_EGRESS_PORT"]))
# What a connection that got through sends: the trap answers anything, the vis server this.
PROBE = b"GET /v1/health HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n"
def raw_connect(authority):
    with socket.create_connection(RELAY, timeout=30) as c:
        c.sendall(f"CONNECT {authority} HTTP/1.1\\r\\nHost: {authority}\\r\\n\\r\\n".encode())
        head = b""
        while b"\\r\\n\\r\\n" not in head:
            d = c.recv(4096)
            if not d:
                break
            head += d
        line = head.split(b"\\r\\n", 1)[0].decode("latin-1")
        if line.startswith("HTTP/1.1 200"):
            c.sendall(PROBE)
            rest = head.split(b"\\r\\n\\r\\n", 1)[1]
            return ["through", (rest or c.recv(16)).decode()]
        return line
def sock(host):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect((host, ${target}, 0, 0) if family == socket.AF_INET6 else (host, ${target}))
        s.sendall(PROBE)
        return s.recv(16).decode()
def url(host):
    return urllib.request.urlopen(f"http://{host}:${target}/", timeout=30).read().decode()
out = {}
for h in ${JSON.stringify(spellings)}:
    out["connect " + h] = attempt(lambda h=h: raw_connect(f"[{h}]:${target}"))
    out["socket " + h] = attempt(lambda h=h: sock(h))
    if "%" not in h:
        out["url " + h] = attempt(lambda h=h: url(f"[{h}]"))
for h in ${JSON.stringify(v4)}:
    out["connect " + h] = attempt(lambda h=h: raw_connect(f"{h}:${target}"))
    out["url " + h] = attempt(lambda h=h: url(h))
print(json.dumps(out))`

  // Every attempt refused, by the proxy, with a reason matching `why`; URLs the guest's own
  // URL parser refuses (an inet_aton form inside brackets) never leave the block either.
  function assertRefused(r: Record<string, [string, unknown]>, why: RegExp, count = 40): void {
    assert.ok(Object.keys(r).length > count, JSON.stringify(r))
    for (const [what, [kind, text]] of Object.entries(r)) {
      const shown = `${what}: ${JSON.stringify([kind, text])}`
      if (what.startsWith('connect ')) {
        assert.equal(kind, 'ok', shown)
        assert.match(String(text), /^HTTP\/1\.1 403 /, shown)
        assert.match(String(text), why, shown)
      } else if (what.startsWith('socket ')) {
        assert.equal(kind, 'PermissionError', shown)
        assert.match(String(text), why, shown)
      } else if (kind === 'HTTPError') {
        assert.match(String(text), why, shown)
      } else {
        // urllib's own URL parsing refuses the bracketed inet_aton forms: nothing was sent.
        assert.match(String(kind), /ValueError/, shown)
        assert.match(String(text), /does not appear to be an IPv4 or IPv6 address/, shown)
      }
    }
  }

  for (const allow of [[], ['*']]) {
    test(`allow ${JSON.stringify(allow)}: every spelling of loopback is refused as loopback`, async () => {
      const s = await session(allow)
      const r = await runLabBlock(s, '/dev/null', attack(LOOPBACK_SPELLINGS, V4_SPELLINGS, port))
      assertRefused(r, /\(loopback\)[^"]*: reachable only through an allow entry naming/)
      assert.equal(hits, 0, 'nothing reached the loopback listener')
    })
  }

  test('the unspecified address, which reaches every local listener, is refused in every spelling', async () => {
    const s = await session(['*', '127.0.0.1', '::1'])
    const r = await runLabBlock(
      s,
      '/dev/null',
      attack(
        ['::', '0:0:0:0:0:0:0:0', '::ffff:0.0.0.0', '::ffff:0:0', '::0.0.0.0'],
        ['0.0.0.0', '0', '0.0.0.0.'],
        port,
      ),
    )
    assertRefused(r, /\(unspecified\): never reachable, whatever the lists say/, 15)
    assert.equal(hits, 0, 'nothing reached the loopback listener')
  })

  test("with 127.0.0.1 and ::1 on the list, the vis server's own port stays refused however spelled", async () => {
    const server: VisServer = await startServer({ home, python, port: 0, pool: { size: 0 } })
    try {
      const s = await session(['*', '127.0.0.1', '::1'])
      const r = await runLabBlock(s, '/dev/null', attack(LOOPBACK_SPELLINGS, V4_SPELLINGS, server.port))
      assertRefused(r, /is the vis host's own listening port \(server or egress relay\): never reachable/)
      // ... while the listed loopback listener itself is reachable through the same spellings.
      const ok = await runLabBlock(s, '/dev/null', attack(['::ffff:7f00:1', '::1'], ['127.1'], port))
      assert.deepEqual(ok[`connect ::ffff:7f00:1`], ['ok', ['through', 'trap']])
      assert.deepEqual(ok['socket ::1'], ['ok', 'trap'])
      assert.deepEqual(ok['connect 127.1'], ['ok', ['through', 'trap']])
      // (urllib reads the trap's bare answer as a bad status line, after reaching it.)
      for (const [what, result] of Object.entries(ok))
        assert.doesNotMatch(JSON.stringify(result), /refused/, what)
      assert.equal(hits, Object.keys(ok).length)
    } finally {
      await server.close()
    }
  })

  // In a tool jail, loopback is the session's own tool network: the guest shim (net.py, with
  // ipaddress) keeps the kernel's spellings of loopback there, and sends the forms the kernel
  // would not route to loopback (compatible, translated, inet_aton tails) to the proxy, which
  // refuses them. Neither way reaches the host's listener on the same port.
  test("in a tool jail, loopback spellings stay on the jail's own loopback or are refused; never the host's", async () => {
    const seen = hits
    const script = join(root, 'jail-loopback.py')
    writeFileSync(
      script,
      `import json, socket, sys, threading
PORT = int(sys.argv[1])
srv = socket.create_server(("::", PORT), family=socket.AF_INET6, dualstack_ipv6=True)
def serve():
    while True:
        c, _ = srv.accept()
        c.sendall(b"jail")
        c.close()
threading.Thread(target=serve, daemon=True).start()
def attempt(f):
    try:
        return ["ok", f()]
    except Exception as e:
        return [type(e).__name__, str(e)]
def sock(host):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect((host, PORT, 0, 0) if family == socket.AF_INET6 else (host, PORT))
        return s.recv(16).decode()
print(json.dumps({h: attempt(lambda h=h: sock(h)) for h in json.loads(sys.argv[2])}))
`,
    )
    const spellings = [...LOOPBACK_SPELLINGS, '127.0.0.1', '2130706433', '127.1']
    const s = await session([], true)
    const r = await s.runBlock(
      `import json
out = await shell(${JSON.stringify(`python3 ${script} ${port} '${JSON.stringify(spellings)}'`)})
print(json.dumps(out))`,
      { timeoutMs: 120_000 },
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    const out = JSON.parse((r.stdout ?? '').trim().split('\n').pop() ?? '{}')
    assert.equal(out.exit, 0, JSON.stringify(out))
    const got: Record<string, [string, string]> = JSON.parse(out.stdout.trim().split('\n').pop())
    // (a zone by name, `%lo`, is a lookup glibc refuses in the jail: an error, nothing reached)
    const local = [
      '0::ffff:7f00:1',
      '0:0:0:0:0:ffff:127.0.0.1',
      '0000:0000:0000:0000:0000:FFFF:7F00:0001',
      '::ffff:7f00:1%1',
      '0:0:0:0:0:0:0:1',
      '::0001',
    ]
    for (const h of [...local, '127.0.0.1', '2130706433', '127.1'])
      assert.deepEqual(got[h], ['ok', 'jail'], h)
    for (const h of [
      '::7f00:1',
      '::127.0.0.1',
      '::ffff:0:7f00:1',
      '::ffff:0:127.0.0.1',
      '::ffff:127.1',
      '::ffff:0x7f.1',
    ]) {
      assert.equal(got[h]?.[0], 'PermissionError', `${h}: ${JSON.stringify(got[h])}`)
      assert.match(String(got[h]?.[1]), /\(loopback\): reachable only through an allow entry naming/, h)
    }
    for (const [h, result] of Object.entries(got)) assert.notDeepEqual(result, ['ok', 'trap'], h)
    assert.equal(hits, seen, "nothing reached the host's loopback listener")
  })
})
