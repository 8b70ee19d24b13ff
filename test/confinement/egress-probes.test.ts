// Outside-in probes of egress, both ways, with the forms models and users actually write:
// spellings of hosts (case, trailing dot, wildcard vs apex), IP literal forms (v6, mapped,
// inet_aton's decimal/octal/hex), redirects off the list, a port the list does not name,
// streaming and big bodies, keep-alive through the proxy, UDP, the network off, tightening
// at run time (open connections cut, loosening refused). Against the lab upstream
// (lab/lab.ts), so nothing leaves loopback or the test's own network namespace. Needs root.
import assert from 'node:assert/strict'
import { copyFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { installEgressLab } from '../../src/confinement/egress/lab.js'
import type { NetworkEntryInput } from '../../src/contracts/network-policy.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { VisError } from '../../src/util/errors.js'
import { python, tempHome } from '../sessions/helpers.js'
import { runLabBlock } from './lab/guest.js'
import { type Lab, startLab } from './lab/lab.js'

const { home, root } = tempHome('egress-probes')

// Helpers on top of lab/guest.ts's attempt(): a urllib GET, a TCP connect that reads what
// the peer says first.
const HELPERS = `import errno, hashlib
def get(url):
    return urllib.request.urlopen(url, timeout=30).read().decode()
def tcp(host, port, family=socket.AF_INET):
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect((host, port))
        return s.recv(16).decode()
`

describe('egress probes: what is allowed works, what is denied is refused by name', () => {
  let lab: Lab
  let rt: Runtime
  let trap: { server: Server; port: number; hits: () => number }
  let ca: string
  const sessions: Session[] = []

  before(async () => {
    let hits = 0
    const server = createServer((s) => {
      hits++
      s.end('trap')
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    trap = { server, port: (server.address() as { port: number }).port, hits: () => hits }
    lab = await startLab()
    // The worker reads only its roots: the lab's CA goes there.
    ca = join(root, 'lab-ca.pem')
    copyFileSync(lab.caFile, ca)
    // More names than the lab's own: a wildcard's apex and subdomain, and localhost as a
    // real resolver answers it.
    installEgressLab({
      names: {
        ...lab.names,
        'wild.test': [lab.address],
        'x.wild.test': [lab.address],
        localhost: ['127.0.0.1', '::1'],
      },
      publicRanges: [`${lab.address}/32`],
    })
    rt = await createRuntime({ home, python, pool: { size: 0 } })
  })
  after(async () => {
    for (const s of sessions) await s.dispose().catch(() => undefined)
    await rt?.close()
    await lab?.close()
    trap?.server.close()
  })

  async function session(
    network: { enabled: boolean; allow?: NetworkEntryInput[]; deny?: string[] },
    shell = false,
  ): Promise<Session> {
    const s = await rt.createSession({
      roots: [root],
      shell,
      network: { enabled: network.enabled, allow: network.allow ?? [], deny: network.deny ?? [] },
    })
    sessions.push(s)
    return s
  }

  const run = (s: Session, body: string) => runLabBlock(s, ca, body, HELPERS)

  test('host spellings: case, trailing dot, wildcard vs apex; every IPv4 form is judged as the address it names', async () => {
    const s = await session({ enabled: true, allow: ['lab.test', '*.wild.test', `127.0.0.1:${trap.port}`] })
    const seen = trap.hits()
    const r = await run(
      s,
      `
print(json.dumps({
    "upper_dot_http": attempt(lambda: get("http://LAB.TEST.:8080/u")),
    "upper_dot_tcp": attempt(lambda: socket.create_connection(("Lab.Test.", ${lab.ports.echo}), timeout=30).close()),
    "upper_gai": attempt(lambda: socket.getaddrinfo("LAB.test.", 80)[0][4][0]),
    "wild_sub": attempt(lambda: get("http://x.wild.test:8080/w")),
    "wild_apex": attempt(lambda: get("http://wild.test:8080/w")),
    "wild_apex_tcp": attempt(lambda: socket.create_connection(("wild.test", 8080), timeout=30)),
    "v4": attempt(lambda: tcp("127.0.0.1", ${trap.port})),
    "mapped": attempt(lambda: tcp("::ffff:127.0.0.1", ${trap.port}, socket.AF_INET6)),
    "v6_loop": attempt(lambda: tcp("::1", ${trap.port}, socket.AF_INET6)),
    "decimal": attempt(lambda: tcp("2130706433", ${trap.port})),
    "hex": attempt(lambda: tcp("0x7f.1", ${trap.port})),
    "octal": attempt(lambda: tcp("0177.0.0.1", ${trap.port})),
    "decimal_gai": attempt(lambda: socket.getaddrinfo("2130706433", ${trap.port})[0][4][0]),
    "decimal_url": attempt(lambda: get("http://2130706433:${trap.port}/")),
    "decimal_other_port": attempt(lambda: tcp("2130706433", 1)),
    "metadata": attempt(lambda: tcp("169.254.169.254", 80)),
    "localhost": attempt(lambda: tcp("localhost", ${trap.port})),
    "gethostbyname_off": attempt(lambda: socket.gethostbyname("elsewhere.test")),
}))`,
    )
    assert.deepEqual(r.upper_dot_http, ['ok', 'lab http GET /u'])
    assert.deepEqual(r.upper_dot_tcp, ['ok', null])
    assert.deepEqual(r.upper_gai, ['ok', lab.address])
    assert.deepEqual(r.wild_sub, ['ok', 'lab http GET /w'])
    const list = `\\(\\*\\.wild\\.test, 127\\.0\\.0\\.1:${trap.port}, lab\\.test\\)`
    assert.equal(r.wild_apex?.[0], 'HTTPError')
    assert.match(
      String(r.wild_apex?.[1]),
      new RegExp(`403: vis egress refused: wild\\.test:8080 is not on the allow list ${list}`),
    )
    assert.equal(r.wild_apex_tcp?.[0], 'PermissionError')
    assert.match(
      String(r.wild_apex_tcp?.[1]),
      new RegExp(`'wild\\.test:8080' refused: wild\\.test:8080 is not on the allow list ${list}`),
    )
    // 127.0.0.1:PORT is listed: the address reaches the trap in each form the OS accepts.
    for (const k of ['v4', 'mapped', 'decimal', 'hex', 'octal']) assert.deepEqual(r[k], ['ok', 'trap'], k)
    assert.deepEqual(r.decimal_gai, ['ok', '127.0.0.1'])
    // Through the proxy the same address is reached (the trap is no HTTP server: a 502 naming why).
    assert.equal(r.decimal_url?.[0], 'HTTPError')
    assert.match(
      String(r.decimal_url?.[1]),
      new RegExp(`502: vis egress: upstream 127\\.0\\.0\\.1:${trap.port} error`),
    )
    assert.equal(trap.hits(), seen + 6)
    const refused: Record<string, RegExp> = {
      v6_loop: new RegExp(`'::1:${trap.port}' refused: ::1:${trap.port} is not on the allow list ${list}`),
      decimal_other_port: new RegExp(
        `'2130706433:1' refused: 127\\.0\\.0\\.1:1 is not on the allow list ${list}`,
      ),
      metadata: /'169\.254\.169\.254:80' refused: 169\.254\.169\.254:80 is not on the allow list/,
      localhost: new RegExp(
        `'localhost:${trap.port}' refused: localhost:${trap.port} is not on the allow list`,
      ),
      gethostbyname_off: /'elsewhere\.test' refused: elsewhere\.test is not on the allow list/,
    }
    for (const [k, re] of Object.entries(refused)) {
      assert.equal(r[k]?.[0], 'PermissionError', `${k}: ${JSON.stringify(r[k])}`)
      assert.match(String(r[k]?.[1]), re, k)
    }
  })

  test('redirects are followed to allowed hosts and refused, by name, off the list; UDP is refused by name, loopback UDP works', async () => {
    const s = await session({ enabled: true, allow: ['lab.test'] })
    const r = await run(
      s,
      `
def udp_loop():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as a:
        a.bind(("127.0.0.1", 0))
        a.settimeout(10)
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"local", a.getsockname())
        return a.recvfrom(16)[0].decode()
print(json.dumps({
    "redirect_ok": attempt(lambda: get("http://lab.test:8080/redirect?to=http://a.lab.test:8080/r")),
    "redirect_http": attempt(lambda: get("http://lab.test:8080/redirect?to=http://elsewhere.test:8080/r")),
    "redirect_https": attempt(lambda: get("https://lab.test:8443/redirect?to=https://elsewhere.test:8443/r")),
    "udp_connect": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect(("${lab.address}", 53))),
    "udp_sendto": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("${lab.address}", 53))),
    "udp_sendto_flags": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", 0, ("lab.test", 53))),
    "udp_sendmsg": attempt(lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendmsg([b"x"], [], 0, ("2001:db8::1", 53))),
    "udp_loopback": attempt(udp_loop),
}))`,
    )
    assert.deepEqual(r.redirect_ok, ['ok', 'lab http GET /r'])
    const rule = /elsewhere\.test:(8080|8443) is not on the allow list \(lab\.test\)/
    assert.equal(r.redirect_http?.[0], 'HTTPError')
    assert.match(String(r.redirect_http?.[1]), rule)
    assert.equal(r.redirect_https?.[0], 'URLError/OSError')
    assert.match(String(r.redirect_https?.[1]), /Tunnel connection failed: 403/)
    assert.match(String(r.redirect_https?.[1]), rule)
    const udp = /refused: only TCP leaves the sandbox \(through the egress proxy\); UDP does not/
    for (const [k, where] of [
      ['udp_connect', `${lab.address}:53`],
      ['udp_sendto', `${lab.address}:53`],
      ['udp_sendto_flags', 'lab.test:53'],
      ['udp_sendmsg', '2001:db8::1:53'],
    ] as const) {
      assert.equal(r[k]?.[0], 'PermissionError', `${k}: ${JSON.stringify(r[k])}`)
      assert.ok(String(r[k]?.[1]).includes(`vis: network access to '${where}' refused`), `${k}: ${r[k]?.[1]}`)
      assert.match(String(r[k]?.[1]), udp, k)
    }
    assert.deepEqual(r.udp_loopback, ['ok', 'local'])
  })

  test("'*', an empty list, the network off, and a list naming only another port: each client both ways", async () => {
    const body = `
print(json.dumps({
    "lab": attempt(lambda: get("http://lab.test:8080/s")),
    "lab_tls": attempt(lambda: get("https://lab.test:8443/s")),
    "lab_tcp": attempt(lambda: socket.create_connection(("lab.test", ${lab.ports.echo}), timeout=30).close()),
    "metadata": attempt(lambda: tcp("169.254.169.254", 80)),
    "metadata_url": attempt(lambda: get("http://169.254.169.254/latest/meta-data/")),
    "loop": attempt(lambda: tcp("127.0.0.1", ${trap.port})),
    "localhost": attempt(lambda: tcp("localhost", ${trap.port})),
    "decimal": attempt(lambda: tcp("2130706433", ${trap.port})),
}))`
    const seen = trap.hits()
    for (const allow of [['*'], []]) {
      const r = await run(await session({ enabled: true, allow }), body)
      assert.deepEqual(r.lab, ['ok', 'lab http GET /s'], String(allow))
      assert.deepEqual(r.lab_tls, ['ok', 'lab https GET /s'], String(allow))
      assert.deepEqual(r.lab_tcp, ['ok', null], String(allow))
      const never =
        /169\.254\.169\.254 \(link-local \(cloud metadata\)\): never reachable, whatever the lists say/
      assert.equal(r.metadata?.[0], 'PermissionError')
      assert.match(String(r.metadata?.[1]), never)
      assert.equal(r.metadata_url?.[0], 'HTTPError')
      assert.match(String(r.metadata_url?.[1]), never)
      const loopback =
        /127\.0\.0\.1 \(loopback\): reachable only through an allow entry naming that IP or CIDR/
      for (const k of ['loop', 'localhost', 'decimal']) {
        assert.equal(r[k]?.[0], 'PermissionError', `${allow} ${k}`)
        assert.match(String(r[k]?.[1]), loopback, `${allow} ${k}`)
      }
      assert.match(String(r.localhost?.[1]), /localhost resolves to 127\.0\.0\.1/)
    }
    const off = await run(await session({ enabled: false }), body)
    for (const [k, v] of Object.entries(off)) {
      assert.match(v[0], /PermissionError$/, k)
      assert.match(String(v[1]), /vis: network access is disabled by the sandbox policy/, k)
    }
    assert.match(String(off.lab?.[1]), /'lab\.test:8080', http\.client\.connect/)
    const port = await run(await session({ enabled: true, allow: ['lab.test:8443'] }), body)
    assert.deepEqual(port.lab_tls, ['ok', 'lab https GET /s'])
    assert.equal(port.lab?.[0], 'HTTPError')
    assert.match(String(port.lab?.[1]), /lab\.test:8080 is not on the allow list \(lab\.test:8443\)/)
    assert.equal(port.lab_tcp?.[0], 'PermissionError')
    assert.match(String(port.lab_tcp?.[1]), /lab\.test:7007 is not on the allow list \(lab\.test:8443\)/)
    assert.equal(trap.hits(), seen)
  })

  test('a 24 MiB upload and a streaming response pass both ways (proxy and TLS tunnel); keep-alive through the proxy checks every request', async () => {
    const s = await session({ enabled: true, allow: ['lab.test'] })
    const r = await run(
      s,
      `
payload = os.urandom(1 << 20) * 24
want = "upload %d %s" % (len(payload), hashlib.sha256(payload).hexdigest())
def up(url):
    return urllib.request.urlopen(urllib.request.Request(url, data=payload, method="POST"), timeout=120).read().decode() == want
def stream(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return [line.decode().strip() for line in r]
def keepalive():
    c = http.client.HTTPConnection("127.0.0.1", int(os.environ["VIS_EGRESS_PORT"]), timeout=30)
    out, socks = [], set()
    for u in ["http://lab.test:8080/k1", "http://a.lab.test:8080/k2", "http://elsewhere.test:8080/k3", "http://lab.test:8080/k4"]:
        c.request("GET", u)
        r = c.getresponse()
        out.append([r.status, r.read().decode().strip()])
        socks.add(id(c.sock))
    return [out, len(socks)]
print(json.dumps({
    "upload_http": attempt(lambda: up("http://lab.test:8080/upload")),
    "upload_https": attempt(lambda: up("https://lab.test:8443/upload")),
    "stream_http": attempt(lambda: stream("http://lab.test:8080/stream?n=8&ms=100")),
    "stream_https": attempt(lambda: stream("https://lab.test:8443/stream?n=8&ms=100")),
    "keepalive": attempt(keepalive),
}))`,
    )
    assert.deepEqual(r.upload_http, ['ok', true])
    assert.deepEqual(r.upload_https, ['ok', true])
    const lines = Array.from({ length: 8 }, (_, i) => `line ${i}`)
    assert.deepEqual(r.stream_http, ['ok', lines])
    assert.deepEqual(r.stream_https, ['ok', lines])
    assert.deepEqual(r.keepalive, [
      'ok',
      [
        [
          [200, 'lab http GET /k1'],
          [200, 'lab http GET /k2'],
          [403, 'vis egress refused: elsewhere.test:8080 is not on the allow list (lab.test)'],
          [200, 'lab http GET /k4'],
        ],
        1,
      ],
    ])
  })

  test('a guest that half-closes after its request reads a reply the server sends 6 s later (past the relay bound)', async () => {
    // Answers 6 s after the guest's FIN: slower than the relays' 5 s linger bound.
    const slow = createServer({ allowHalfOpen: true }, (c) => {
      c.resume()
      c.once('end', () => setTimeout(() => c.end('late reply'), 6000))
    })
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', () => r()))
    const port = (slow.address() as { port: number }).port
    try {
      const s = await session({ enabled: true, allow: [`127.0.0.1:${port}`] })
      const r = await run(
        s,
        `def ask():
    with socket.create_connection(("127.0.0.1", ${port}), timeout=60) as c:
        c.sendall(b"request")
        c.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            d = c.recv(100)
            if not d:
                return out.decode()
            out += d
print(json.dumps({"reply": attempt(ask)}))`,
      )
      assert.deepEqual(r.reply, ['ok', 'late reply'])
    } finally {
      slow.close()
    }
  })

  test('shell(): wget honours the proxy both ways; raw TCP without it fails at once; python3 in a tool refuses UDP by name', async () => {
    const s = await session({ enabled: true, allow: ['lab.test'] }, true)
    const r = await run(
      s,
      `cmds = {
    "wget": "wget -q -O - http://lab.test:8080/w",
    "wget_tls": "wget -q -O - --ca-certificate=${ca} https://lab.test:8443/w",
    "wget_off": "wget -O - http://elsewhere.test:8080/w 2>&1",
    "wget_off_tls": "wget -O - --ca-certificate=${ca} https://elsewhere.test:8443/w 2>&1",
    "curl_off": "curl -sS http://elsewhere.test:8080/w 2>&1",
    "devtcp": "timeout 20 bash -c 'exec 3<>/dev/tcp/${lab.address}/8080' 2>&1",
    "py_udp": "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\\"x\\", (\\"${lab.address}\\", 53))' 2>&1 | tail -1",
}
out = {}
for k, c in cmds.items():
    r = await shell(c, timeout_secs=120)
    out[k] = [r["exit"], r["stdout"]]
print(json.dumps(out))`,
    )
    assert.deepEqual(r.wget, [0, 'lab http GET /w'])
    assert.deepEqual(r.wget_tls, [0, 'lab https GET /w'])
    const rule = /vis egress refused: elsewhere\.test:(8080|8443) is not on the allow list \(lab\.test\)/
    assert.equal(r.wget_off?.[0], 8)
    assert.match(String(r.wget_off?.[1]), /ERROR 403: /)
    assert.match(String(r.wget_off?.[1]), rule)
    assert.equal(r.wget_off_tls?.[0], 4)
    assert.match(String(r.wget_off_tls?.[1]), /Proxy tunneling failed: /)
    assert.match(String(r.wget_off_tls?.[1]), rule)
    assert.match(String(r.curl_off?.[1]), rule)
    // No proxy, no way out: the tool network has only loopback (SECURITY.md, Not covered).
    assert.equal(r.devtcp?.[0], 1)
    assert.match(String(r.devtcp?.[1]), /Network is unreachable/)
    assert.match(
      String(r.py_udp?.[1]),
      new RegExp(
        `PermissionError: \\[Errno 13\\] vis: network access to '${lab.address.replace(/\./g, '\\.')}:53' refused: only TCP leaves`,
      ),
    )
  })

  test('tightening cuts open connections the new list refuses, keeps the ones it allows, refuses the next; loosening is refused', async () => {
    const s = await session({ enabled: true, allow: ['lab.test', 'b.lab.test'] })
    const first = await run(
      s,
      `def hold(name):
    c = socket.socket()
    c.settimeout(30)
    c.connect((name, ${lab.ports.echo}))
    c.sendall(b"one")
    return c, c.recv(8).decode()
held, a = hold("lab.test")
kept, b = hold("b.lab.test")
feed = urllib.request.urlopen("http://lab.test:8080/stream?n=600&ms=50", timeout=30)
print(json.dumps({"held": ["ok", a], "kept": ["ok", b], "feed": ["ok", feed.readline().decode().strip()]}))`,
    )
    assert.deepEqual(first, { held: ['ok', 'one'], kept: ['ok', 'one'], feed: ['ok', 'line 0'] })
    await s.setNetwork({ enabled: true, allow: ['b.lab.test'] })
    const second = await run(
      s,
      `def again(c):
    c.sendall(b"two")
    data = c.recv(8).decode()
    return data if data else "closed"
def rest():
    return len(feed.read())
print(json.dumps({
    "feed": attempt(rest),
    "held": attempt(lambda: again(held)),
    "kept": attempt(lambda: again(kept)),
    "new": attempt(lambda: socket.create_connection(("lab.test", ${lab.ports.echo}), timeout=30).close()),
}))`,
    )
    // The cut connection reads its end (or a reset), never the echo.
    assert.ok(
      JSON.stringify(second.held) === '["ok","closed"]' || second.held?.[0] === 'ConnectionResetError',
      JSON.stringify(second.held),
    )
    assert.deepEqual(second.kept, ['ok', 'two'])
    // The streaming download through the proxy (600 lines over 30 s) ends cut, not complete.
    assert.equal(second.feed?.[0], 'IncompleteRead', JSON.stringify(second.feed))
    assert.equal(second.new?.[0], 'PermissionError')
    assert.match(
      String(second.new?.[1]),
      /'lab\.test:7007' refused: lab\.test:7007 is not on the allow list \(b\.lab\.test\)/,
    )
    await assert.rejects(
      s.setNetwork({ enabled: true, allow: ['b.lab.test', 'lab.test'] }),
      (e) =>
        e instanceof VisError &&
        e.code === 'worker.network-loosen' &&
        /lab\.test is not in the session's allow list \(b\.lab\.test\)/.test(e.message),
    )
  })
})
