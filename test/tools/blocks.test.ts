// The host tools through real blocks: a real runtime, a jailed worker with a real
// CPython, the tools called from the model's Python, and shell/git processes run in
// the session's own jail.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { isAlive, processTree } from '../../src/tools/proc/tree.js'
import { files, link, tempDir } from './helpers.js'

const python = process.env.VIS_PYTHON_VERSION
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// Runs a block whose last printed line is JSON and returns it parsed.
async function py(s: Session, code: string): Promise<any> {
  const r = await s.runBlock(`import json\n${code}`, { timeoutMs: 120_000 })
  assert.equal(r.error, undefined, `block failed: ${JSON.stringify(r.error)}`)
  const lines = (r.stdout ?? '').trim().split('\n')
  return JSON.parse(lines[lines.length - 1]!)
}

// A tool call from the guest that is expected to fail: its code and message.
const ATTEMPT = `
async def attempt(call):
    try:
        return {"ok": await call}
    except Exception as e:
        return {"code": getattr(e, "code", None), "message": str(e)}
`

const lit = (v: unknown) => `json.loads(${JSON.stringify(JSON.stringify(v))})`

// Host processes whose environment carries this marker (set by the commands the
// tests run): the jail's pid namespace is visible from the host's /proc.
function marked(mark: string): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
      if (state === 'Z' || state === 'X') continue
      if (readFileSync(`/proc/${name}/environ`).includes(`VIS_TEST_MARK=${mark}\0`)) out.push(Number(name))
    } catch {}
  }
  return out
}

// Host processes in the network namespace `ns` (as readlink shows it: net:[inode]).
function inNamespace(ns: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return readlinkSync(`/proc/${n}/ns/net`) === ns
      } catch {
        return false
      }
    })
    .map(Number)
}

async function until<T>(f: () => Promise<T> | T, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await f()
    if (ok(v) || Date.now() > end) return v
    await sleep(50)
  }
}

describe('host tools through real blocks', () => {
  let rt: Runtime
  before(async () => {
    rt = await createRuntime({ home: await tempDir('vis-blocks-home-'), python, pool: { size: 0 } })
  })
  after(async () => {
    await rt.close()
  })

  async function session(roots: string[], shell = false): Promise<Session> {
    const s = await rt.createSession({ roots, shell })
    await py(s, ATTEMPT.concat('\nprint(1)'))
    return s
  }

  test('cat anchors drive patch; a stale anchor is re-located or refused', async () => {
    const ws = await tempDir()
    await files(ws, { 'a.py': 'def f():\n    return 1\n', 'b.txt': 'alpha\nbeta\ngamma\n' })
    const s = await session([ws])
    const cat = await py(s, 'r = await cat("a.py")\nprint(json.dumps(r))')
    assert.match(cat.content, /^1:[0-9a-f]{6}\|def f\(\):\n2:[0-9a-f]{6}\| {4}return 1$/)
    const anchors = cat.content.split('\n').map((l: string) => l.slice(0, l.indexOf('|')))
    // The model's anchors round-trip: patch by anchor, then by the anchors patch returned.
    const first = await py(
      s,
      `r = await patch([{"path": "a.py", "from_anchor": ${JSON.stringify(anchors[1])}, "replace": "    return 2"}])\nprint(json.dumps(r))`,
    )
    assert.equal(await readFile(join(ws, 'a.py'), 'utf8'), 'def f():\n    return 2\n')
    const fresh = first.files[0].changed[0].lines[0].split('|')[0]
    // Someone inserts lines above: the anchor is found again by its hash.
    await writeFile(join(ws, 'a.py'), 'import os\n\ndef f():\n    return 2\n')
    const moved = await py(
      s,
      `r = await patch([{"path": "a.py", "from_anchor": ${JSON.stringify(fresh)}, "replace": "    return 3"}])\nprint(json.dumps(r))`,
    )
    assert.deepEqual(moved.files[0].relocated, [{ anchor: fresh, line: 4 }])
    assert.equal(await readFile(join(ws, 'a.py'), 'utf8'), 'import os\n\ndef f():\n    return 3\n')
    // The anchored line itself changed: refused with the current text, nothing written.
    const b = (await py(s, 'print(json.dumps(await cat("b.txt")))')).content.split('\n')
    await writeFile(join(ws, 'b.txt'), 'alpha\nBETA\ngamma\n')
    const stale = await py(
      s,
      `print(json.dumps(await attempt(patch([{"path": "b.txt", "from_anchor": ${JSON.stringify(b[1].split('|')[0])}, "replace": "x"}]))))`,
    )
    assert.equal(stale.code, 'tool.anchor-stale')
    assert.match(stale.message, /2:[0-9a-f]{6}\|BETA/)
    assert.equal(await readFile(join(ws, 'b.txt'), 'utf8'), 'alpha\nBETA\ngamma\n')
    await s.dispose()
  })

  test('a multi-edit with one bad edit changes nothing; a syntax-breaking edit is refused', async () => {
    const ws = await tempDir()
    await files(ws, { 'a.txt': 'a1\na2\n', 'b.txt': 'b1\nb2\n', 'm.py': 'def f():\n    return 1\n' })
    const s = await session([ws])
    const bad = await py(
      s,
      `a = (await cat("a.txt"))["content"].split("\\n")[0].split("|")[0]
print(json.dumps(await attempt(patch([
    {"path": "a.txt", "from_anchor": a, "replace": "A1"},
    {"path": "b.txt", "search": "b2", "replace": "B2"},
    {"path": "b.txt", "search": "not there at all", "replace": "x"},
]))))`,
    )
    assert.equal(bad.code, 'tool.no-match')
    assert.equal(await readFile(join(ws, 'a.txt'), 'utf8'), 'a1\na2\n')
    assert.equal(await readFile(join(ws, 'b.txt'), 'utf8'), 'b1\nb2\n')
    const syntax = await py(
      s,
      'print(json.dumps(await attempt(patch([{"path": "m.py", "search": "return 1", "replace": "return (1"}]))))',
    )
    assert.equal(syntax.code, 'tool.syntax')
    assert.match(syntax.message, /m\.py/)
    assert.equal(await readFile(join(ws, 'm.py'), 'utf8'), 'def f():\n    return 1\n')
    // Both pass once the edits are good.
    await py(
      s,
      'await patch([{"path": "b.txt", "search": "b2", "replace": "B2"}, {"path": "m.py", "search": "return 1", "replace": "return (1)"}])\nprint(1)',
    )
    assert.equal(await readFile(join(ws, 'b.txt'), 'utf8'), 'b1\nB2\n')
    assert.equal(await readFile(join(ws, 'm.py'), 'utf8'), 'def f():\n    return (1)\n')
    await s.dispose()
  })

  test('path escapes by .., absolute paths and symlinks are refused, naming the roots', async () => {
    const ws = await tempDir()
    const outside = await tempDir()
    await files(outside, { 'secret.txt': 'SECRET\n', 'd/x.txt': 'SECRET\n' })
    await files(ws, { 'in.txt': 'inside\n', 'real/ok.txt': 'harmless\n' })
    await link(join(outside, 'secret.txt'), join(ws, 'leak.txt'))
    await link(join(outside, 'd'), join(ws, 'leakdir'))
    const s = await session([ws])
    const tries = await py(
      s,
      `out = []
for p in ${lit(['../x', 'real/../../x', join(outside, 'secret.txt'), '/etc/passwd', 'leak.txt', 'leakdir/x.txt'])}:
    out.append(await attempt(cat(p)))
out.append(await attempt(write("leakdir/new.txt", "pwned")))
out.append(await attempt(write("../evil.txt", "pwned")))
out.append(await attempt(patch([{"path": "leak.txt", "search": "SECRET", "replace": "X"}])))
print(json.dumps(out))`,
    )
    assert.equal(tries.length, 9)
    for (const t of tries) {
      assert.equal(t.code, 'tool.path-denied', JSON.stringify(t))
      assert.ok(t.message.includes(`allowed roots: ${ws}`), t.message)
    }
    assert.equal(existsSync(join(outside, 'd', 'new.txt')), false)
    assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'SECRET\n')
    // A directory link flipping between inside and outside while the guest keeps
    // reading and writing through it: no call ever reaches the outside. (Short: the
    // tool-level race in paths.test.ts runs the long version.)
    await symlink(join(ws, 'real'), join(ws, 'flip'))
    let stop = false
    const flipper = (async () => {
      for (let n = 0; !stop; n++) {
        await rm(join(ws, 'flip.tmp'), { force: true })
        await symlink(n % 2 ? join(ws, 'real') : join(outside, 'd'), join(ws, 'flip.tmp'))
        await rename(join(ws, 'flip.tmp'), join(ws, 'flip'))
        await sleep(0)
      }
    })()
    const race = await py(
      s,
      `seen = {"ok": 0, "denied": 0, "leaked": 0}
for i in range(40):
    r = await attempt(cat("flip/x.txt" if i % 2 else "flip/ok.txt"))
    if "ok" in r:
        seen["leaked" if "SECRET" in r["ok"]["content"] else "ok"] += 1
    else:
        seen["denied"] += 1
    await attempt(write("flip/w.txt", "pwned"))
print(json.dumps(seen))`,
    )
    stop = true
    await flipper
    assert.equal(race.leaked, 0)
    assert.ok(race.denied > 0, JSON.stringify(race))
    assert.equal(existsSync(join(outside, 'd', 'w.txt')), false)
    await s.dispose()
  })

  test('grep pages with next_offset and uses smart case', async () => {
    const ws = await tempDir()
    await files(ws, {
      'src/app.ts': 'const Config = 1\nreturn config\n',
      'src/config.ts': 'export const config = 2\n',
      'big.txt': Array.from({ length: 120 }, (_, i) => `needle ${i}`).join('\n'),
    })
    const s = await session([ws])
    const r = await py(
      s,
      `lower = await grep("config")
upper = await grep("Config")
lines, offset, pages = [], 0, 0
while offset is not None:
    page = await grep("needle", limit=50, offset=offset)
    lines += [h["line"] for h in page["hits"]]
    offset = page["next_offset"]
    pages += 1
print(json.dumps({"lower": [lower["case_sensitive"], sorted({h["path"] for h in lower["hits"]})],
    "upper": [upper["case_sensitive"], [[h["path"], h["text"]] for h in upper["hits"]]],
    "pages": pages, "lines": lines}))`,
    )
    assert.deepEqual(r.lower, [false, ['src/app.ts', 'src/config.ts']])
    assert.deepEqual(r.upper, [true, [['src/app.ts', 'const Config = 1']]])
    assert.equal(r.pages, 3)
    assert.deepEqual(
      r.lines,
      Array.from({ length: 120 }, (_, i) => i + 1),
    )
    await s.dispose()
  })

  test('git runs jailed in the workspace; a failing command is data', async () => {
    const ws = await tempDir()
    execFileSync('git', ['init', '-q', '-b', 'main', ws])
    await files(ws, { 'a.txt': 'hello\n' })
    const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e' }
    execFileSync('git', ['add', '.'], { cwd: ws })
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '-m', 'first'], {
      cwd: ws,
      env,
    })
    const s = await session([ws])
    assert.ok(s.toolNames().includes('git'))
    const r = await py(
      s,
      `ok = await git("log", "--format=%s")
top = await git("rev-parse", "--show-toplevel")
bad = await git("checkout", "no-such-branch")
await write("b.txt", "two\\n")
st = await git("status", "--porcelain")
print(json.dumps({"ok": ok, "top": top["stdout"], "bad": bad, "st": st["stdout"]}))`,
    )
    assert.deepEqual(Object.keys(r.ok).sort(), [
      'args',
      'cmd',
      'duration_ms',
      'exit',
      'stderr',
      'stdout',
      'timed_out',
    ])
    assert.equal(r.ok.stdout, 'first\n')
    assert.equal(r.ok.exit, 0)
    assert.equal(r.top.trim(), ws)
    assert.notEqual(r.bad.exit, 0)
    assert.match(r.bad.stderr, /no-such-branch/)
    assert.equal(r.bad.timed_out, false)
    assert.equal(r.st, '?? b.txt\n')
    await s.dispose()
  })

  test('a jailed command killed by a signal reports the signal, not 128+N', async () => {
    const ws = await tempDir()
    const s = await session([ws], true)
    const r = await py(
      s,
      `out = {}
for k, c in {"kill": "echo before; kill -9 $$; echo after", "term": "kill -TERM $$", "code": "exit 137", "ok": "true"}.items():
    res = await shell(c)
    out[k] = {"exit": res["exit"], "signal": res["signal"], "stdout": res["stdout"]}
print(json.dumps(out))`,
    )
    assert.deepEqual(r.kill, { exit: null, signal: 'SIGKILL', stdout: 'before\n' })
    assert.deepEqual(r.term, { exit: null, signal: 'SIGTERM', stdout: '' })
    // A command that exits 137 by itself is an exit code, not a signal.
    assert.deepEqual(r.code, { exit: 137, signal: null, stdout: '' })
    assert.deepEqual(r.ok, { exit: 0, signal: null, stdout: '' })
    await s.dispose()
  })

  test('shell runs jailed: huge output keeps head and tail, a timeout kills the tree', async () => {
    const ws = await tempDir()
    const s = await session([ws], true)
    const mark = randomUUID()
    const r = await py(
      s,
      `big = await shell('echo FIRST; head -c 5000000 /dev/zero | tr "\\\\0" x; echo; echo LAST')
slow = await shell("export VIS_TEST_MARK=${mark}; echo started; (sleep 30 &); sleep 30", timeout_secs=2)
print(json.dumps({"big": big, "slow": slow}))`,
    )
    assert.equal(r.big.exit, 0)
    assert.equal(r.big.truncated, true)
    assert.ok(r.big.stdout.startsWith('FIRST\nxxx'))
    assert.ok(r.big.stdout.endsWith('xxx\nLAST\n'))
    assert.match(r.big.stdout, /… \[\d+ bytes omitted\] …/)
    assert.ok(r.big.stdout.length < 40 * 1024)
    assert.equal(r.slow.timed_out, true)
    assert.equal(r.slow.exit, null)
    assert.equal(r.slow.stdout, 'started\n')
    assert.deepEqual(
      await until(
        () => marked(mark),
        (p) => p.length === 0,
      ),
      [],
    )
    await s.dispose()
  })

  test('interrupting a block cancels its jailed command and kills its tree', async () => {
    const ws = await tempDir()
    const s = await session([ws], true)
    const mark = randomUUID()
    const r = await s.runBlock(`await shell("export VIS_TEST_MARK=${mark}; sleep 60 & sleep 60")`, {
      timeoutMs: 1500,
    })
    assert.equal(r.timedOut, true)
    assert.deepEqual(
      await until(
        () => marked(mark),
        (p) => p.length === 0,
        5000,
      ),
      [],
    )
    // The cancelled run leaves the session's resources once its jail is gone.
    assert.deepEqual(
      await until(
        () => s.resources.list(),
        (l) => l.length === 0,
        5000,
      ),
      [],
    )
    await s.dispose()
  })

  test('a jailed shell cannot read or write outside the roots, nor reach the network', async () => {
    const ws = await tempDir()
    const outside = await tempDir()
    await files(outside, { 'secret.txt': 'SECRET\n' })
    process.env.VIS_TEST_HOST_SECRET = 'host-only-value'
    const s = await session([ws], true)
    const r = await py(
      s,
      `cmds = {
    "shadow": "cat /etc/shadow",
    "passwd": "cat /etc/passwd",
    "outside": "cat ${join(outside, 'secret.txt')}",
    "ls_outside": "ls ${outside}",
    "write_outside": "echo pwned > ${join(outside, 'pwned.txt')}",
    "write_etc": "echo pwned > /etc/pwned",
    "home": "ls /root",
    "env": "env",
    "net": "python3 -c 'import socket; socket.create_connection((\\"1.1.1.1\\", 80), timeout=3)'",
    "write_in": "echo fine > inside.txt && cat inside.txt && id -u",
    "layers": "grep -E '^(Seccomp|NoNewPrivs|CapEff):' /proc/self/status",
    "unshare": "unshare -Ur true",
    "inet": "python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)'",
}
out = {k: await shell(v) for k, v in cmds.items()}
print(json.dumps({k: [v["exit"], v["stdout"], v["stderr"]] for k, v in out.items()}))`,
    )
    delete process.env.VIS_TEST_HOST_SECRET
    // The process layers apply to the shell and everything it starts.
    assert.match(r.layers[1], /Seccomp:\s+2/)
    assert.match(r.layers[1], /NoNewPrivs:\s+1/)
    assert.match(r.layers[1], /CapEff:\s+0+\n/)
    // Seccomp still refuses every family but unix and inet (inet reaches only the
    // session's loopback: see the shared-network test).
    assert.match(r.inet[2], /Address family not supported/)
    const denied = ['shadow', 'passwd', 'outside', 'ls_outside', 'write_outside', 'write_etc', 'home', 'net']
    for (const k of [...denied, 'unshare', 'inet']) {
      assert.notEqual(r[k][0], 0, `${k} must fail: ${JSON.stringify(r[k])}`)
      assert.doesNotMatch(r[k][1], /SECRET|root:/, k)
    }
    assert.match(r.net[2], /Network is unreachable|Permission denied|Errno/)
    assert.equal(existsSync(join(outside, 'pwned.txt')), false)
    assert.doesNotMatch(r.env[1], /host-only-value/)
    assert.equal(r.write_in[0], 0)
    assert.match(r.write_in[1], /^fine\n\d+\n$/)
    assert.equal(await readFile(join(ws, 'inside.txt'), 'utf8'), 'fine\n')
    await s.dispose()
  })

  test('network on: the jailed shell goes out only through the egress proxy', async () => {
    const server = createServer((req, res) => res.end(`hello ${req.url}`))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    const port = (server.address() as AddressInfo).port
    try {
      const ws = await tempDir()
      const s = await rt.createSession({
        roots: [ws],
        shell: true,
        network: { enabled: true, allow: ['127.0.0.1'] },
      })
      const r = await py(
        s,
        `ok = await shell("curl -sS http://127.0.0.1:${port}/allowed")
denied = await shell("curl -s -o /dev/null -w '%{http_code}' http://10.255.0.1:${port}/")
direct = await shell("curl -sS --noproxy '*' --max-time 3 http://127.0.0.1:${port}/direct")
print(json.dumps([ok, denied, direct]))`,
      )
      assert.equal(r[0].stdout, 'hello /allowed')
      assert.equal(r[1].stdout, '403')
      // Around the proxy there is no way out: the jail's namespace has only loopback.
      assert.notEqual(r[2].exit, 0)
      assert.doesNotMatch(r[2].stdout, /hello/)
      // `localhost` is the session's own tool network, not the proxy's business.
      await writeFile(join(ws, 'page.txt'), 'own server\n')
      await py(
        s,
        'await shell("exec python3 -u -m http.server 8001 --bind 127.0.0.1", id="dev", wait_secs=1)\nprint(1)',
      )
      await until(
        () => py(s, 'print(json.dumps(await shell(op="logs", id="dev")))'),
        (l) => /Serving HTTP/.test(l.stdout),
      )
      const own = await py(
        s,
        'print(json.dumps(await shell("curl -sS --max-time 5 http://localhost:8001/page.txt")))',
      )
      assert.equal(own.stdout, 'own server\n')
      await s.dispose()
    } finally {
      server.close()
    }
  })

  test("a directory the session's policy hides is hidden from its shell too", async () => {
    const ws = await tempDir()
    await files(ws, { '.vis/extensions/trusted.py': 'TRUSTED = 1\n' })
    const hidden = join(ws, '.vis', 'extensions')
    const s = await rt.createSession({ roots: [ws], shell: true, hidden: [hidden] })
    const r = await py(
      s,
      `r = [await shell(c) for c in ["cat .vis/extensions/trusted.py", "echo 'import os' > .vis/extensions/evil.py", "mv .vis .vis-moved"]]
print(json.dumps([[x["exit"], x["stdout"]] for x in r]))`,
    )
    for (const [exit, out] of r) {
      assert.notEqual(exit, 0)
      assert.doesNotMatch(out, /TRUSTED/)
    }
    assert.equal(existsSync(join(hidden, 'evil.py')), false)
    assert.equal(readFileSync(join(hidden, 'trusted.py'), 'utf8'), 'TRUSTED = 1\n')
    await s.dispose()
  })

  test('a background server under a pty: logs read, input sent, stopped, nothing left', async () => {
    const ws = await tempDir()
    // A tiny line server: it logs what it is sent, and says goodbye on SIGTERM.
    await files(ws, {
      'server.py': [
        'import signal, sys',
        'def bye(*_):',
        '    print("shutting down", flush=True)',
        '    sys.exit(0)',
        'signal.signal(signal.SIGTERM, bye)',
        'print("serving on a tty:", sys.stdin.isatty(), flush=True)',
        'for line in sys.stdin:',
        '    print("request", line.strip(), flush=True)',
        '',
      ].join('\n'),
    })
    const s = await session([ws], true)
    const mark = randomUUID()
    const start = await py(
      s,
      `print(json.dumps(await shell("export VIS_TEST_MARK=${mark}; python3 -u server.py", id="srv", wait_secs=1)))`,
    )
    assert.equal(start.op, 'start')
    const logs = await until(
      () => py(s, 'print(json.dumps(await shell(op="logs", id="srv")))'),
      (l) => l.stdout.includes('serving'),
    )
    assert.match(logs.stdout, /serving on a tty: True/)
    assert.equal(logs.running, true)
    const sent = await until(
      () => py(s, 'print(json.dumps(await shell(op="send", id="srv", input="ping\\n", wait_secs=0.3)))'),
      (l) => l.stdout.includes('request ping'),
    )
    assert.match(sent.stdout, /request ping/)
    assert.ok(marked(mark).length > 0, 'the server runs')
    assert.deepEqual(
      s.resources.list().map((r) => [r.id, r.kind, r.running]),
      [['srv', 'shell', true]],
    )
    const stop = await py(s, 'print(json.dumps(await shell(op="stop", id="srv")))')
    assert.equal(stop.running, false)
    assert.match(stop.stdout, /shutting down/)
    assert.deepEqual(
      await until(
        () => marked(mark),
        (p) => p.length === 0,
      ),
      [],
    )
    assert.deepEqual(s.resources.list(), [])
    await s.dispose()
  })

  test("a session's tool processes share one loopback network: a background server is reached, then stopped", async () => {
    const ws = await tempDir()
    await files(ws, {
      'index.html': 'hello from the dev server\n',
      'fetch.py':
        'import sys, urllib.request\nprint(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode(), end="")\n',
    })
    const s = await session([ws], true)
    const other = await session([await tempDir()], true)
    const mark = randomUUID()
    const start = await py(
      s,
      `print(json.dumps(await shell("export VIS_TEST_MARK=${mark}; exec python3 -u -m http.server 8000 --bind 127.0.0.1", id="dev", wait_secs=1)))`,
    )
    assert.equal(start.op, 'start')
    const up = await until(
      () => py(s, 'print(json.dumps(await shell(op="logs", id="dev")))'),
      (l) => /Serving HTTP/.test(l.stdout),
    )
    assert.match(up.stdout, /Serving HTTP on 127\.0\.0\.1 port 8000/)
    const r = await py(
      s,
      `cmds = {
    "py": "python3 fetch.py http://localhost:8000/index.html",
    "curl": "curl -sS --max-time 5 http://127.0.0.1:8000/index.html",
    "ns": "readlink /proc/self/ns/net",
    "ns2": "readlink /proc/self/ns/net",
    "external": "python3 -c 'import socket; socket.create_connection((\\"1.1.1.1\\", 80), timeout=3)'",
    "low_port": "python3 -c 'import socket; socket.socket().bind((\\"127.0.0.1\\", 80))'",
    "outside": "cat /etc/shadow",
}
out = {k: await shell(v) for k, v in cmds.items()}
print(json.dumps({k: [v["exit"], v["stdout"], v["stderr"]] for k, v in out.items()}))`,
    )
    assert.deepEqual(r.py, [0, 'hello from the dev server\n', ''])
    assert.equal(r.curl[1], 'hello from the dev server\n')
    // One namespace for the session's commands, not the host's.
    assert.match(r.ns[1], /^net:\[\d+\]\n$/)
    assert.equal(r.ns[1], r.ns2[1])
    assert.notEqual(r.ns[1].trim(), readlinkSync('/proc/self/ns/net'))
    // With the network off the server changes nothing else: no way out, no low port.
    assert.notEqual(r.external[0], 0)
    assert.match(r.external[2], /Network is unreachable|Errno/)
    assert.notEqual(r.low_port[0], 0)
    assert.notEqual(r.outside[0], 0)
    // Another session has a loopback of its own.
    const theirs = await py(
      other,
      'print(json.dumps(await shell("curl -sS --max-time 5 http://127.0.0.1:8000/index.html")))',
    )
    assert.notEqual(theirs.exit, 0)
    assert.doesNotMatch(theirs.stdout, /hello/)
    await other.dispose()
    const logs = await until(
      () => py(s, 'print(json.dumps(await shell(op="logs", id="dev")))'),
      (l) => (l.stdout.match(/"GET \/index\.html HTTP\/1\.1" 200/g) ?? []).length >= 2,
    )
    assert.equal((logs.stdout.match(/"GET \/index\.html HTTP\/1\.1" 200/g) ?? []).length, 2)
    const stop = await py(s, 'print(json.dumps(await shell(op="stop", id="dev")))')
    assert.equal(stop.running, false)
    assert.deepEqual(
      await until(
        () => marked(mark),
        (p) => p.length === 0,
      ),
      [],
    )
    const ns = r.ns[1].trim()
    assert.ok(inNamespace(ns).length > 0, 'the session keeps its tool network until disposed')
    await s.dispose()
    assert.deepEqual(
      await until(
        () => inNamespace(ns),
        (p) => p.length === 0,
        5000,
      ),
      [],
      'no process of the tool network survives disposal',
    )
  })

  test('disposal kills every process tree the session started', async () => {
    const ws = await tempDir()
    const s = await session([ws], true)
    const mark = randomUUID()
    await py(
      s,
      `await shell("export VIS_TEST_MARK=${mark}; sleep 60 & (setsid sleep 60 &); sleep 60", id="a", wait_secs=0.3)
await shell("export VIS_TEST_MARK=${mark}; while true; do echo tick; sleep 0.2; done", id="b", wait_secs=0.3)
print(1)`,
    )
    // A foreground command still running when the session goes.
    const pending = s.runBlock(`await shell("export VIS_TEST_MARK=${mark}; sleep 60; echo never")`)
    pending.catch(() => undefined)
    // Marked: the commands' children (bash exports the mark to them, not to itself).
    const pids = await until(
      () => marked(mark),
      (p) => p.length >= 5,
    )
    assert.ok(pids.length >= 5, `expected the trees to run, saw ${pids.length}`)
    // And every process of each tree as the host sees it: jail wrappers, script, bash.
    const trees = s.resources.list().flatMap((r) => (typeof r.pid === 'number' ? processTree(r.pid) : []))
    assert.ok(trees.length >= 8, `expected whole trees, saw ${trees.length}`)
    await s.dispose()
    assert.deepEqual(
      await until(
        () => marked(mark),
        (p) => p.length === 0,
        5000,
      ),
      [],
    )
    assert.deepEqual(trees.filter(isAlive), [])
    // The block that was waiting on the killed command does not report its output.
    const late = await pending.then(
      (o) => o.stdout ?? '',
      () => '',
    )
    assert.doesNotMatch(late, /never/)
  })
})
