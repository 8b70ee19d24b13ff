// Egress proven against a real upstream: a lab network namespace (lab/lab.ts) the egress
// policy treats as public, named only through the resolver map the test installs. Every
// client a model writes reaches it when the policy allows, and is refused, naming the
// destination and the rule, when it does not. Needs root (CI runs as root).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { NetworkEntryInput } from '../../src/contracts/network-policy.js'
import { startServer, type VisServer } from '../../src/http/server.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { python, tempHome } from '../sessions/helpers.js'
import { runLabBlock } from './lab/guest.js'
import { type Lab, startLab } from './lab/lab.js'

const { home, root } = tempHome('egress-lab')

// A bare repository served the "dumb" HTTP way (static files after update-server-info).
function bareRepository(dir: string): void {
  const work = mkdtempSync(join(tmpdir(), 'vis-lab-work-'))
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=lab', '-c', 'user.email=lab@lab.test', ...args], {
      cwd,
      stdio: 'pipe',
    })
  git(work, 'init', '-q', '-b', 'main')
  writeFileSync(join(work, 'README.md'), 'cloned from the lab\n')
  git(work, 'add', 'README.md')
  git(work, 'commit', '-q', '-m', 'first')
  git(work, 'clone', '-q', '--bare', work, dir)
  git(dir, 'update-server-info')
  rmSync(work, { recursive: true, force: true })
}

// A loopback listener on the host that counts who reached it.
async function trap(): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0
  const server = createServer((s) => {
    hits++
    s.end('trap')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return { server, port: (server.address() as { port: number }).port, hits: () => hits }
}

describe('egress against a lab upstream', () => {
  let lab: Lab
  let rt: Runtime
  let loop: Awaited<ReturnType<typeof trap>>
  let other: Awaited<ReturnType<typeof trap>>
  let ca: string
  let files: string
  const sessions: Session[] = []

  before(async () => {
    // The lab's echo port is the loopback trap's port: a rebinding that reached loopback
    // would land in the trap instead of the lab.
    loop = await trap()
    other = await trap()
    files = mkdtempSync(join(tmpdir(), 'vis-lab-files-'))
    bareRepository(join(files, 'repo.git'))
    lab = await startLab({ echoPort: loop.port, files })
    ca = join(root, 'lab-ca.pem')
    copyFileSync(lab.caFile, ca)
    rt = await createRuntime({ home, python, pool: { size: 0 } })
  })
  after(async () => {
    for (const s of sessions) await s.dispose().catch(() => undefined)
    await rt?.close()
    await lab?.close()
    rmSync(files, { recursive: true, force: true })
    loop?.server.close()
    other?.server.close()
  })

  async function session(allow: NetworkEntryInput[], deny: string[] = [], shell = false): Promise<Session> {
    const s = await rt.createSession({ roots: [root], shell, network: { enabled: true, allow, deny } })
    sessions.push(s)
    return s
  }

  const run = (s: Session, body: string) => runLabBlock(s, ca, body)

  const clients = (host: string) => `
def hc():
    c = http.client.HTTPConnection("${host}", 8080, timeout=30)
    c.request("GET", "/hc")
    return c.getresponse().read().decode()
def hcs():
    c = http.client.HTTPSConnection("${host}", 8443, timeout=30, context=ssl.create_default_context())
    c.request("GET", "/hcs")
    return c.getresponse().read().decode()
def raw():
    with socket.create_connection(("${host}", ${lab.ports.echo}), timeout=30) as s:
        s.sendall(b"ping")
        return s.recv(16).decode()
async def aio():
    r, w = await asyncio.open_connection("${host}", ${lab.ports.echo})
    w.write(b"pong")
    await w.drain()
    data = await r.readexactly(4)
    w.close()
    return data.decode()
res = {
    "urllib_http": attempt(lambda: urllib.request.urlopen("http://${host}:8080/u", timeout=30).read().decode()),
    "urllib_https": attempt(lambda: urllib.request.urlopen("https://${host}:8443/u", timeout=30).read().decode()),
    "urllib_no_proxy": attempt(lambda: urllib.request.build_opener(urllib.request.ProxyHandler({})).open("https://${host}:8443/np", timeout=30).read().decode()),
    "http_client": attempt(hc),
    "https_client": attempt(hcs),
    "raw_tcp": attempt(raw),
    "asyncio": attempt(lambda: asyncio.run(aio())),
    "getaddrinfo": attempt(lambda: sorted({a[4][0] for a in socket.getaddrinfo("${host}", 8080)})),
    "gethostbyname": attempt(lambda: socket.gethostbyname("${host}")),
}
print(json.dumps(res))`

  test('every client reaches the allowed lab by name: urllib (proxy and direct), http.client, TLS, raw TCP, asyncio, getaddrinfo', async () => {
    const s = await session(['lab.test'])
    const r = await run(s, clients('lab.test'))
    assert.deepEqual(r, {
      urllib_http: ['ok', 'lab http GET /u'],
      urllib_https: ['ok', 'lab https GET /u'],
      urllib_no_proxy: ['ok', 'lab https GET /np'],
      http_client: ['ok', 'lab http GET /hc'],
      https_client: ['ok', 'lab https GET /hcs'],
      raw_tcp: ['ok', 'ping'],
      asyncio: ['ok', 'pong'],
      getaddrinfo: ['ok', [lab.address]],
      gethostbyname: ['ok', lab.address],
    })
    assert.equal(loop.hits(), 0)
  })

  test('the same lab off the list is refused by every client, naming the destination and the rule', async () => {
    const s = await session(['other.test'])
    const r = await run(s, clients('lab.test'))
    const rule = /lab\.test(:\d+)? is not on the allow list \(other\.test\)/
    assert.equal(r.urllib_http?.[0], 'HTTPError')
    assert.match(String(r.urllib_http?.[1]), rule)
    assert.equal(r.urllib_https?.[0], 'URLError/OSError')
    assert.match(String(r.urllib_https?.[1]), /Tunnel connection failed: 403/)
    assert.match(String(r.urllib_https?.[1]), rule)
    for (const k of ['urllib_no_proxy'] as const) assert.equal(r[k]?.[0], 'URLError/PermissionError', k)
    for (const k of [
      'http_client',
      'https_client',
      'raw_tcp',
      'asyncio',
      'getaddrinfo',
      'gethostbyname',
    ] as const) {
      assert.equal(r[k]?.[0], 'PermissionError', `${k}: ${JSON.stringify(r[k])}`)
      assert.match(String(r[k]?.[1]), /vis: network access to 'lab\.test(:\d+)?' refused: /, k)
      assert.match(String(r[k]?.[1]), rule, k)
    }
  })

  test('a sibling name does not admit its neighbour; *.name admits subdomains only', async () => {
    const sibling = await session(['b.lab.test'])
    const r = await run(
      sibling,
      `print(json.dumps({"a": attempt(lambda: socket.getaddrinfo("a.lab.test", 80)[0][4][0]), "b": attempt(lambda: socket.create_connection(("b.lab.test", ${lab.ports.echo}), timeout=30).close())}))`,
    )
    assert.equal(r.a?.[0], 'PermissionError')
    assert.match(String(r.a?.[1]), /a\.lab\.test:80 is not on the allow list \(b\.lab\.test\)/)
    assert.deepEqual(r.b, ['ok', null])
    const subs = await session(['*.lab.test'])
    const s = await run(
      subs,
      `print(json.dumps({"apex": attempt(lambda: socket.getaddrinfo("lab.test", 80)), "sub": attempt(lambda: urllib.request.urlopen("http://a.lab.test:8080/s", timeout=30).read().decode())}))`,
    )
    assert.equal(s.apex?.[0], 'PermissionError')
    assert.deepEqual(s.sub, ['ok', 'lab http GET /s'])
  })

  test('an empty allow list reaches every public destination but not the floor; a specific deny beats a specific allow', async () => {
    const open = await session([], ['b.lab.test'])
    const r = await run(
      open,
      `print(json.dumps({n: attempt(lambda n=n: urllib.request.urlopen("http://%s:8080/o" % n, timeout=30).read().decode()) for n in ["lab.test", "a.lab.test", "b.lab.test", "inside.test"]}))`,
    )
    assert.deepEqual(r['lab.test'], ['ok', 'lab http GET /o'])
    assert.deepEqual(r['a.lab.test'], ['ok', 'lab http GET /o'])
    assert.equal(r['b.lab.test']?.[0], 'HTTPError')
    assert.match(String(r['b.lab.test']?.[1]), /b\.lab\.test:8080 is refused by deny entry 'b\.lab\.test'/)
    assert.equal(r['inside.test']?.[0], 'HTTPError')
    assert.match(String(r['inside.test']?.[1]), /inside\.test resolves to 127\.0\.0\.1 \(loopback\)/)
    const both = await session(['lab.test'], ['lab.test:8080'])
    const d = await run(
      both,
      `print(json.dumps({"http": attempt(lambda: socket.create_connection(("lab.test", 8080), timeout=30).close()), "echo": attempt(lambda: socket.create_connection(("lab.test", ${lab.ports.echo}), timeout=30).close())}))`,
    )
    assert.equal(d.http?.[0], 'PermissionError')
    assert.match(String(d.http?.[1]), /refused by deny entry 'lab\.test:8080'/)
    assert.deepEqual(d.echo, ['ok', null])
  })

  test('read-only: GET passes, POST is refused by the rule, and tunnels that would hide the method are refused', async () => {
    const s = await session([{ host: 'lab.test', access: 'read-only' }])
    const r = await run(
      s,
      `def post():
    return urllib.request.urlopen(urllib.request.Request("http://lab.test:8080/p", data=b"x=1", method="POST"), timeout=30).read().decode()
print(json.dumps({
    "get": attempt(lambda: urllib.request.urlopen("http://lab.test:8080/g", timeout=30).read().decode()),
    "head": attempt(lambda: urllib.request.urlopen(urllib.request.Request("http://lab.test:8080/h", method="HEAD"), timeout=30).status),
    "post": attempt(post),
    "raw": attempt(lambda: socket.create_connection(("lab.test", ${lab.ports.echo}), timeout=30)),
}))`,
    )
    assert.deepEqual(r.get, ['ok', 'lab http GET /g'])
    assert.deepEqual(r.head, ['ok', 200])
    assert.equal(r.post?.[0], 'HTTPError')
    assert.match(
      String(r.post?.[1]),
      /403: vis egress refused: lab\.test:8080: POST is not allowed by 'lab\.test \(read-only\)'/,
    )
    assert.equal(r.raw?.[0], 'PermissionError')
    assert.match(
      String(r.raw?.[1]),
      /lab\.test:\d+: 'lab\.test \(read-only\)' limits HTTP methods or paths, which a tunnel/,
    )
  })

  test('names on the list that resolve to loopback, RFC 1918, link-local, or mix them with public answers are refused', async () => {
    const s = await session([
      'inside.test',
      'private.test',
      'mixed.test',
      'meta.test',
      'metadata.google.internal',
    ])
    const r = await run(
      s,
      `print(json.dumps({n: attempt(lambda n=n: socket.create_connection((n, ${loop.port}), timeout=30)) for n in ["inside.test", "private.test", "mixed.test", "meta.test", "metadata.google.internal"]}))`,
    )
    const why: Record<string, RegExp> = {
      'inside.test':
        /inside\.test resolves to 127\.0\.0\.1 \(loopback\): reachable only through an allow entry naming that IP or CIDR/,
      'private.test': /10\.0\.0\.1 \(private \(RFC 1918\)\)/,
      'mixed.test': /mixed\.test resolves to 127\.0\.0\.1 \(loopback\)/,
      'meta.test': /169\.254\.169\.254 \(link-local \(cloud metadata\)\): never reachable/,
      'metadata.google.internal': /cloud metadata name: always refused/,
    }
    for (const [name, re] of Object.entries(why)) {
      assert.equal(r[name]?.[0], 'PermissionError', name)
      assert.match(String(r[name]?.[1]), re, name)
    }
    assert.equal(loop.hits(), 0)
  })

  test('an explicit 127.0.0.1:PORT entry reaches that host loopback listener and nothing else on loopback', async () => {
    const start = loop.hits()
    const s = await session([`127.0.0.1:${loop.port}`])
    const r = await run(
      s,
      `def get(port):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as c:
        return c.recv(16).decode()
print(json.dumps({"listed": attempt(lambda: get(${loop.port})), "other": attempt(lambda: get(${other.port})), "name": attempt(lambda: get_by_name())}))`.replace(
        'get_by_name()',
        `socket.create_connection(("inside.test", ${loop.port}), timeout=30).close()`,
      ),
    )
    assert.deepEqual(r.listed, ['ok', 'trap'])
    assert.equal(r.other?.[0], 'PermissionError')
    assert.match(String(r.other?.[1]), new RegExp(`127\\.0\\.0\\.1:${other.port} is not on the allow list`))
    assert.equal(other.hits(), 0)
    // A name resolving to the listed address is not the IP entry's business: refused.
    assert.equal(r.name?.[0], 'PermissionError')
    assert.match(String(r.name?.[1]), /inside\.test:\d+ is not on the allow list/)
    assert.equal(loop.hits(), start + 1)
  })

  test('a guest that shuts down its write side after the request still reads the whole reply (socket and asyncio)', async () => {
    // Reads until its client's FIN, then answers with what it got and closes, like a service
    // that takes one request per connection; nc -N and HTTP/1.0-style clients work this way.
    const server = createServer({ allowHalfOpen: true }, (c) => {
      const parts: Buffer[] = []
      c.on('data', (d: Buffer) => parts.push(d))
      c.once('end', () => {
        const got = Buffer.concat(parts)
        c.end(
          `got ${got.length} bytes, ${createHash('sha256').update(got).digest('hex')}\n${'r'.repeat(300_000)}`,
        )
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    const port = (server.address() as { port: number }).port
    try {
      const s = await session([`127.0.0.1:${port}`])
      const r = await run(
        s,
        `import hashlib
payload = bytes(range(256)) * 4000
def talk():
    with socket.create_connection(("127.0.0.1", ${port}), timeout=30) as c:
        c.sendall(payload)
        c.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            d = c.recv(65536)
            if not d:
                return out
            out += d
async def atalk():
    r, w = await asyncio.open_connection("127.0.0.1", ${port})
    w.write(payload)
    await w.drain()
    w.write_eof()
    out = await r.read()
    w.close()
    return out
def summary(out):
    head, _, rest = out.partition(b"\\n")
    return [head.decode(), len(rest)]
print(json.dumps({
    "want": f"got {len(payload)} bytes, {hashlib.sha256(payload).hexdigest()}",
    "socket": attempt(lambda: summary(talk())),
    "asyncio": attempt(lambda: summary(asyncio.run(atalk()))),
}))`,
      )
      const want = (r.want as unknown as string) ?? ''
      assert.match(want, /^got 1024000 bytes, [0-9a-f]{64}$/)
      assert.deepEqual(r.socket, ['ok', [want, 300_000]])
      assert.deepEqual(r.asyncio, ['ok', [want, 300_000]])
    } finally {
      server.close()
    }
  })

  test('rebinding: a name flipping between the lab and loopback never reaches loopback', async () => {
    const seen = loop.hits()
    const s = await session(['flip.test'])
    const r = await run(
      s,
      `def once():
    with socket.create_connection(("flip.test", ${lab.ports.echo}), timeout=30) as c:
        c.sendall(b"echo")
        return c.recv(16).decode()
out = [attempt(once) for _ in range(6)]
gai = [attempt(lambda: sorted({a[4][0] for a in socket.getaddrinfo("flip.test", ${lab.ports.echo})})) for _ in range(4)]
print(json.dumps({"connects": out, "lookups": gai}))`,
    )
    const connects = r.connects as unknown as [string, unknown][]
    const lookups = r.lookups as unknown as [string, unknown][]
    assert.ok(
      connects.some((c) => c[0] === 'ok'),
      JSON.stringify(connects),
    )
    for (const c of connects) {
      if (c[0] === 'ok') assert.equal(c[1], 'echo')
      else assert.match(String(c[1]), /flip\.test resolves to 127\.0\.0\.1 \(loopback\)/)
    }
    for (const l of lookups) {
      if (l[0] === 'ok') assert.deepEqual(l[1], [lab.address])
      else assert.match(String(l[1]), /loopback/)
    }
    assert.ok(lookups.some((l) => l[0] !== 'ok') && lookups.some((l) => l[0] === 'ok'))
    assert.equal(loop.hits(), seen, 'nothing reached the loopback listener')
  })

  test("the vis server's port and the egress relay stay unreachable even with allow ['*', '127.0.0.1']", async () => {
    const server: VisServer = await startServer({ home, python, port: 0, pool: { size: 0 } })
    try {
      const s = await session(['*', '127.0.0.1'])
      const r = await run(
        s,
        `print(json.dumps({
    "server": attempt(lambda: socket.create_connection(("127.0.0.1", ${server.port}), timeout=30)),
    "server_http": attempt(lambda: urllib.request.urlopen("http://127.0.0.1:${server.port}/v1/health", timeout=30).read().decode()),
    "relay": attempt(lambda: urllib.request.urlopen("http://127.0.0.1:3128/", timeout=30).read().decode()),
    "trap": attempt(lambda: socket.create_connection(("127.0.0.1", ${other.port}), timeout=30).recv(16).decode()),
}))`,
      )
      assert.equal(r.server?.[0], 'PermissionError')
      assert.match(String(r.server?.[1]), /own listening port/)
      assert.equal(r.server_http?.[0], 'HTTPError')
      assert.match(String(r.server_http?.[1]), /own listening port/)
      // The relay port as a destination is the host's, through the proxy: refused.
      assert.equal(r.relay?.[0], 'HTTPError')
      assert.match(String(r.relay?.[1]), /127\.0\.0\.1:3128 is the vis host's own listening port/)
      // ... while an ordinary loopback listener is reachable under that list.
      assert.deepEqual(r.trap, ['ok', 'trap'])
    } finally {
      await server.close()
    }
  })

  test('shell=True tool processes: curl (HTTP and HTTPS) and git clone reach the allowed lab; off-list names are refused', async () => {
    const s = await session(['lab.test'], [], true)
    const r = await run(
      s,
      `cmds = {
    "http": "curl -sS --max-time 30 http://lab.test:8080/c",
    "https": "curl -sS --max-time 30 --cacert ${ca} https://lab.test:8443/c",
    "python": "python3 -c 'import urllib.request as u; print(u.urlopen(\\"http://lab.test:8080/py\\", timeout=30).read().decode())'",
    "py_raw": "python3 -c 'import socket; s = socket.create_connection((\\"lab.test\\", ${lab.ports.echo}), timeout=30); s.sendall(b\\"tool\\"); print(s.recv(8).decode(), socket.gethostbyname(\\"lab.test\\"))'",
    "py_off": "python3 -c 'import socket; socket.create_connection((\\"elsewhere.test\\", 80), timeout=30)' 2>&1 | tail -1",
    "own_server": "python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & for i in $(seq 100); do python3 -c 'import socket, urllib.request as u; print(u.urlopen(\\"http://localhost:8765/\\", timeout=5).status, socket.create_connection((\\"127.0.0.1\\", 8765)).close())' 2>/dev/null && break; sleep 0.1; done; kill %1",
    "clone": "git -c http.sslCAInfo=${ca} clone -q https://lab.test:8443/files/repo.git cloned && cat cloned/README.md",
    "off_http": "curl -s -o /dev/null -w '%{http_code}' --max-time 30 http://elsewhere.test:8080/",
    "off_https": "curl -sS --max-time 30 --cacert ${ca} https://elsewhere.test:8443/ 2>&1; echo exit=$?",
    "direct": "curl -sS --noproxy '*' --max-time 5 http://${lab.address}:8080/ 2>&1; echo exit=$?",
}
out = {}
for k, c in cmds.items():
    r = await shell(c, timeout_secs=120)
    out[k] = ["ok" if r["exit"] == 0 else "exit %s" % r["exit"], r["stdout"]]
print(json.dumps(out))`,
    )
    assert.deepEqual(r.http, ['ok', 'lab http GET /c'])
    assert.deepEqual(r.https, ['ok', 'lab https GET /c'])
    assert.deepEqual(r.clone, ['ok', 'cloned from the lab\n'])
    assert.deepEqual(r.python, ['ok', 'lab http GET /py\n'])
    // Loopback in a tool jail is the session's own tool network: a background server of
    // the same session is reached by name and address without the proxy.
    assert.deepEqual(r.own_server, ['ok', '200 None\n'])
    // A python3 script's raw socket and lookup go through the proxy as in a block.
    assert.deepEqual(r.py_raw, ['ok', `tool ${lab.address}\n`])
    assert.match(
      String(r.py_off?.[1]),
      /PermissionError: \[Errno 13\] vis: network access to 'elsewhere\.test:80' refused: elsewhere\.test:80 is not on the allow list \(lab\.test\)/,
    )
    assert.deepEqual(r.off_http, ['ok', '403'])
    assert.match(String(r.off_https?.[1]), /403/)
    assert.doesNotMatch(String(r.off_https?.[1]), /lab https/)
    // Around the proxy there is no way out: the tool network has only loopback.
    assert.match(String(r.direct?.[1]), /exit=[1-9]/)
    assert.doesNotMatch(String(r.direct?.[1]), /lab http/)
  })

  test('network_probe prints each rule verdict and the decision, sending nothing', async () => {
    const s = await session([{ host: 'lab.test', access: 'read-only' }, 'b.lab.test:443'], ['x.lab.test'])
    const before = await s.runBlock(
      'network_probe("http://lab.test:8080/upload", method="POST")\nnetwork_probe("b.lab.test:443")\nnetwork_probe("https://x.lab.test/")\nnetwork_probe("inside.test:80")',
    )
    assert.equal(before.error, undefined, JSON.stringify(before.error))
    const out = before.stdout ?? ''
    assert.match(out, /target: http:\/\/lab\.test:8080\/upload \(POST\)/)
    assert.match(
      out,
      /allow lab\.test \(read-only\): matches, but POST is not allowed by 'lab\.test \(read-only\)'/,
    )
    assert.match(out, /decision: refused: lab\.test:8080: POST is not allowed/)
    assert.match(
      out,
      /target: b\.lab\.test:443\n(.*\n)*?decision: allowed: b\.lab\.test:443 is allowed by allow entry 'b\.lab\.test:443'/,
    )
    assert.match(out, /deny {2}x\.lab\.test: matches: refuse/)
    assert.match(out, /decision: refused: x\.lab\.test:443 is refused by deny entry 'x\.lab\.test'/)
    assert.match(out, /decision: refused: inside\.test:80 is not on the allow list/)
    // Network off: the probe says so, and no rule is consulted.
    const off = await rt.createSession({ roots: [root] })
    sessions.push(off)
    const o = await off.runBlock('network_probe("https://lab.test/")')
    assert.equal(
      o.stdout,
      'target: https://lab.test/\n  network access is off for this session: no rule is consulted\ndecision: refused\n',
    )
  })

  test('tightening the network at run time reaches the host proxy: a name dropped from the list is refused at once', async () => {
    const s = await session(['lab.test', 'b.lab.test'], [], true)
    const fetch = `curl = await shell("curl -s -o /dev/null -w '%{http_code}' --max-time 30 http://lab.test:8080/")
print(json.dumps({"lab": attempt(lambda: socket.create_connection(("lab.test", ${lab.ports.echo}), timeout=30).close()), "b": attempt(lambda: urllib.request.urlopen("http://b.lab.test:8080/t", timeout=30).read().decode()), "curl": ["ok", curl["stdout"]]}))`
    const open = await run(s, fetch)
    assert.deepEqual(open, { lab: ['ok', null], b: ['ok', 'lab http GET /t'], curl: ['ok', '200'] })
    await s.setNetwork({ enabled: true, allow: ['b.lab.test'] })
    const narrowed = await run(s, fetch)
    assert.equal(narrowed.lab?.[0], 'PermissionError')
    assert.match(String(narrowed.lab?.[1]), /not on the allow list \(b\.lab\.test\)/)
    assert.deepEqual(narrowed.b, ['ok', 'lab http GET /t'])
    // The session's tool network (its own proxy) is tightened too.
    assert.deepEqual(narrowed.curl, ['ok', '403'])
  })
})
