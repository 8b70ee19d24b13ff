// Attack (tenth outsider pass; SECURITY.md Roots: a root is refused when it is `/`, a pseudo-filesystem,
// `/proc`, `/sys`, `/dev`, `/run`, a vis home or inside the runtime; The tool network: "Tool processes
// of one session can talk to each other ... they already share the roots", never another session's).
// The host keeps state its jails use in its temporary directory (os.tmpdir(): TMPDIR, else /tmp): the
// tool jails' PYTHONUSERBASE tree (`vis-toolsite-*`, ONE per host process, shared by every session's tool
// jails with the network on: src/sessions/tool-jail.ts toolPythonSite), each egress proxy's socket folder (`vis-egress-*`),
// the tool jails' hosts and git config files. `/tmp` is an allowed root (a scratch session), and so is
// any folder holding TMPDIR (a workspace at $HOME with TMPDIR=~/tmp). A block of such a session writes
// the host's `vis-toolsite-*/lib/python3.X/site-packages/` (usercustomize.py is a link the host made;
// the folder is the host user's, so the sandbox replaces it): every `python3` that ANY other session
// runs under `shell()` then runs the block's code first, inside that other session's jail, with its
// roots, its network and its secrets. One session acts on all the others of the host.
//
// Reproduction: a host with TMPDIR=T; session B (root RB, shell and network on) runs `python3 -c 'print(6*7)'`
// once (the host makes T/vis-toolsite-*); session A (root T) runs one block that replaces every
// `usercustomize.py` there with code copying RB's secret.txt to RB/stolen-by-A.txt; B runs python3 again:
// RB/stolen-by-A.txt appears. A fix: keep the host's own files out of every root (refuse a root that
// contains the host's tmpdir, or make those folders elsewhere: under the vis home, which every jail
// masks) and bind them into the jails from fds.
//
// Fixed (fx10b): the root guard refuses a root that is, or contains, the host's temp directory, or any
// folder the host made such state in (src/util/host-state-dirs.ts), with policy.root-holds-host-tmp.
// Each case keeps the attack body: without the refusal, it fails because the attack succeeds.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import type { VisError } from '../../src/util/errors.js'
import { python } from '../sessions/helpers.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-host-tmp-'))
after(() => rmSync(base, { recursive: true, force: true }))

const pkg = resolve(import.meta.dirname, '../..')
const fixture = resolve(import.meta.dirname, 'fixtures/host-tmpdir-in-root-host.mjs')

test("a session rooted at the host's tmpdir cannot plant code in other sessions' tool jails", () => {
  const T = join(base, 'tmp')
  const RB = join(base, 'b-workspace')
  mkdirSync(T)
  mkdirSync(RB)
  writeFileSync(join(RB, 'secret.txt'), 'B-ONLY-SECRET\n')
  const stolen = join(RB, 'stolen-by-A.txt')
  const planted = `import os\ntry:\n    open('stolen-by-A.txt', 'w').write(open('secret.txt').read())\nexcept OSError:\n    pass\n`
  const codeA = [
    'import glob, os',
    `sites = glob.glob(${JSON.stringify(T)} + '/vis-toolsite-*/lib/python3.*/site-packages')`,
    `print('sites', len(sites), sorted(os.listdir(${JSON.stringify(T)})))`,
    'for s in sites:',
    '    try:',
    "        os.unlink(s + '/usercustomize.py')",
    `        open(s + '/usercustomize.py', 'w').write(${JSON.stringify(planted)})`,
    "        print('planted', s[-40:])",
    '    except OSError as e:',
    "        print('refused', e)",
  ].join('\n')
  const host = spawnSync(process.execPath, [fixture, pkg, RB, T, join(base, 'home'), codeA], {
    env: { ...process.env, TMPDIR: T },
    encoding: 'utf8',
    timeout: 180_000,
  })
  assert.equal(host.status, 0, `the host process failed: ${host.stdout} ${host.stderr}`)
  const out = JSON.parse(host.stdout.trim().split('\n').pop()!) as {
    before: string
    a?: string
    after: string
    refused?: { code: string; message: string }
  }
  assert.match(out.before, /42/, `session B's shell python did not run: ${host.stdout}`)
  assert.ok(
    !existsSync(stolen),
    `session A (root = the host's tmpdir) rewrote the host's shared tool-jail site folder and session B's next ` +
      `\`python3\` ran A's code inside B's jail, copying B's secret: ${existsSync(stolen) ? readFileSync(stolen, 'utf8').trim() : ''} ` +
      `(A: ${(out.a ?? '').trim().replace(/\n/g, ' | ')}; B after: ${out.after.trim()})`,
  )
  assert.match(out.after, /42/, `session B's shell python stopped working: ${host.stdout}`)
  assert.equal(out.refused?.code, 'policy.root-holds-host-tmp', `A's root was not refused: ${host.stdout}`)
  assert.match(out.refused.message, /temporary directory/)
  assert.match(out.refused.message, /subfolder/)
  assert.ok(!out.refused.message.includes('vis-toolsite'), 'the host state folder is not named')
})

// The same folder holds each egress proxy's socket (`vis-egress-*/egress.sock`, src/confinement/egress/
// proxy.ts). A session with the network OFF, rooted at the host's tmpdir, connects to another session's
// proxy socket (AF_UNIX is allowed: the sandbox's own sockets) and has the host make requests under that
// other session's network policy: here a loopback service only session B may reach.
test("a network-off session rooted at the host's tmpdir cannot use another session's egress proxy", async () => {
  const T = join(base, 'tmp2')
  const RB = join(base, 'b2-workspace')
  mkdirSync(T)
  mkdirSync(RB)
  const server = createServer((_req, res) => res.end('LOOPBACK-SERVICE-ONLY-B-MAY-READ'))
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res))
  const port = (server.address() as AddressInfo).port
  const saved = process.env.TMPDIR
  process.env.TMPDIR = T
  const rt = await createRuntime({ home: join(base, 'home2'), python, pool: { size: 0 } })
  let out = ''
  let refusal: VisError | undefined
  let wider: VisError | undefined
  try {
    const b = await rt.createSession({
      roots: [RB],
      network: { enabled: true, allow: [`127.0.0.1:${port}`] },
    })
    await b.runBlock('print(1)')
    // A root inside the tmpdir (a folder made for a session, as every test's) is still a root.
    const inside = mkdtempSync(join(T, 'ws-'))
    const c = await rt.createSession({ roots: [inside] })
    const rc = await c.runBlock(
      `open(${JSON.stringify(join(inside, 'f.txt'))}, 'w').write('ok'); print('inside ok')`,
    )
    assert.match(rc.stdout ?? '', /inside ok/, JSON.stringify(rc))
    assert.equal(readFileSync(join(inside, 'f.txt'), 'utf8'), 'ok')
    await c.dispose()
    // A folder holding where the host made B's proxy folder is refused even after TMPDIR moved on.
    if (saved === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = saved
    wider = await rt.createSession({ roots: [base] }).then(
      async (s) => {
        await s.dispose()
        return undefined
      },
      (e: VisError) => e,
    )
    process.env.TMPDIR = T
    let a: Awaited<ReturnType<typeof rt.createSession>> | undefined
    try {
      a = await rt.createSession({ roots: [T] })
    } catch (err) {
      refusal = err as VisError
    }
    if (a !== undefined) {
      const r = await a.runBlock(
        [
          'import glob, socket',
          `socks = glob.glob(${JSON.stringify(T)} + '/vis-egress-*/egress.sock')`,
          "print('sockets', len(socks))",
          'for p in socks:',
          '    try:',
          '        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)',
          '        s.connect(p)',
          `        s.sendall(b'GET http://127.0.0.1:${port}/ HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\nConnection: close\\r\\n\\r\\n')`,
          "        data = b''",
          '        while chunk := s.recv(65536):',
          '            data += chunk',
          "        print('answer', data.split(b'\\r\\n', 1)[0].decode(), data.split(b'\\r\\n\\r\\n', 1)[-1].decode(errors='replace'))",
          '    except OSError as e:',
          "        print('refused', e)",
        ].join('\n'),
      )
      out = `${r.stdout ?? ''}${r.error ? JSON.stringify(r.error) : ''}`
      await a.dispose()
    }
    await b.dispose()
  } finally {
    await rt.close()
    if (saved === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = saved
    server.close()
  }
  assert.doesNotMatch(
    out,
    /LOOPBACK-SERVICE-ONLY-B-MAY-READ/,
    `a session with the network off used session B's egress proxy socket in the host's tmpdir (its root) to reach a loopback service: ${out.trim()}`,
  )
  assert.equal(
    refusal?.code,
    'policy.root-holds-host-tmp',
    `the host's tmpdir was accepted as a root: ${out.trim()}`,
  )
  assert.equal(refusal.context.path, T)
  assert.equal(
    wider?.code,
    'policy.root-holds-host-tmp',
    'a root holding where the host made state was accepted',
  )
})
