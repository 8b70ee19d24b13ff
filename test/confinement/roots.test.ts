// Issue 30 §3, §5, §8: roots that would expose the server are refused over HTTP and MCP with the
// rule's code; a root around the vis home is allowed with the home masked; the operator's
// allow-list holds both ways; a root path swapped for a symlink between the jail's check and its
// mount (a deterministic pause, setRootsCheckedHook) never shows the jail the outside.
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { allowRootsFrom } from '../../src/cli/commands/serve.js'
import {
  type OpenedRoot,
  openBelow,
  openRoots,
  pinRoots,
  setRootsCheckedHook,
} from '../../src/confinement/root-guard.js'
import { childPolicy } from '../../src/engine/roots.js'
import type { VisServer } from '../../src/http/server.js'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { normalizePolicy } from '../../src/worker/worker-policy.js'
import { client, python, spawnServe, testServer } from '../http/helpers.js'
import { clientOptions, withRoots } from '../mcp/roots.js'

const here = fileURLToPath(new URL('.', import.meta.url))
const repo = join(here, '..', '..')
const tmp = (p: string) => realpathSync(mkdtempSync(join(tmpdir(), `vis-roots-${p}-`)))

// A server-side secret the attacks try to reach, and a directory no client was given.
const outside = tmp('outside')
writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE-SECRET\n')

const BAD_ROOTS: [string, string][] = [
  ['/proc', 'policy.root-pseudo-fs'],
  ['/proc/', 'policy.root-pseudo-fs'],
  ['//proc', 'policy.root-pseudo-fs'],
  ['/proc/../proc', 'policy.root-pseudo-fs'],
  ['/proc/self', 'policy.root-pseudo-fs'],
  ['/proc/self/cwd', 'policy.root-pseudo-fs'],
  ['/proc/1/root', 'policy.root-pseudo-fs'],
  ['/sys', 'policy.root-pseudo-fs'],
  ['/sys/fs/cgroup', 'policy.root-pseudo-fs'],
  ['/dev', 'policy.root-pseudo-fs'],
  ['/dev/shm', 'policy.root-pseudo-fs'],
  ['/run', 'policy.root-pseudo-fs'],
  ['/run/user/0', 'policy.root-pseudo-fs'],
  ['/var/run', 'policy.root-pseudo-fs'],
]

describe('roots that expose the server (HTTP)', () => {
  const base = tmp('home-parent')
  const home = join(base, 'home')
  const ws = tmp('ws')
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    ;({ server, call } = await testServer({ home, pool: { size: 0 } }))
  })
  after(async () => {
    await server.close()
  })

  test('pseudo-filesystems, however spelled, are refused with 400 policy.root-pseudo-fs', async () => {
    for (const [root, code] of BAD_ROOTS) {
      const r = await call('POST', '/v1/sessions', { roots: [root] })
      assert.equal(r.status, 400, `${root}: ${r.text}`)
      assert.equal(r.body.error.code, code, root)
      assert.match(r.body.error.message, /kernel pseudo-filesystems/)
    }
    // A symlink inside a workspace that leads to /proc (and to /dev/shm) is judged by its target.
    symlinkSync('/proc', join(ws, 'proc-link'))
    symlinkSync('/dev/shm', join(ws, 'shm-link'))
    for (const link of ['proc-link', 'shm-link']) {
      const r = await call('POST', '/v1/sessions', { roots: [join(ws, link)] })
      assert.equal(r.status, 400, r.text)
      assert.equal(r.body.error.code, 'policy.root-pseudo-fs')
      assert.ok(!r.text.includes('/dev/shm'), 'where the link leads is not told')
    }
  })

  test('a root that is or lies inside the vis home is refused with 400 policy.root-vis-home', async () => {
    mkdirSync(join(home, 'logs'), { recursive: true })
    for (const root of [home, join(home, 'logs'), `${home}/`]) {
      const r = await call('POST', '/v1/sessions', { roots: [root] })
      assert.equal(r.status, 400, r.text)
      assert.equal(r.body.error.code, 'policy.root-vis-home')
    }
    symlinkSync(home, join(ws, 'home-link'))
    const viaLink = await call('POST', '/v1/sessions', { roots: [join(ws, 'home-link')] })
    assert.equal(viaLink.body.error.code, 'policy.root-vis-home')
  })

  // The host's tmpdir holds files other sessions' jails run and connect to (host-state-dirs.ts).
  test("a root that is or holds the host's temp directory is refused with 400 policy.root-holds-host-tmp", async () => {
    const hostTmp = tmpdir()
    symlinkSync(hostTmp, join(ws, 'tmp-link'))
    for (const root of [hostTmp, `${hostTmp}/`, join(ws, 'tmp-link')]) {
      const r = await call('POST', '/v1/sessions', { roots: [root] })
      assert.equal(r.status, 400, `${root}: ${r.text}`)
      assert.equal(r.body.error.code, 'policy.root-holds-host-tmp', root)
      assert.match(r.body.error.message, /temporary directory .*subfolder .*TMPDIR/s)
      assert.equal(r.body.error.details.path.replace(/\/$/, ''), root.replace(/\/$/, ''))
    }
    // A folder made inside it, as every session in these tests has, is a root as before.
    const r = await call('POST', '/v1/sessions', { roots: [ws] })
    assert.equal(r.status, 201, r.text)
    await call('DELETE', `/v1/sessions/${r.body.id}`)
  })

  test('a root that is or lies inside a project .vis folder is refused with 400 policy.root-in-vis-folder', async () => {
    const project = join(ws, 'proj-with-vis')
    mkdirSync(join(project, '.vis', 'extensions', 'pkg'), { recursive: true })
    for (const root of [
      join(project, '.vis'),
      join(project, '.vis', 'extensions', 'pkg'),
      `${project}/.vis/`,
    ]) {
      const r = await call('POST', '/v1/sessions', { roots: [root] })
      assert.equal(r.status, 400, r.text)
      assert.equal(r.body.error.code, 'policy.root-in-vis-folder')
      assert.match(r.body.error.message, /Name the project folder itself/)
    }
    // Judged by where the root really is, and by the path given.
    symlinkSync(join(project, '.vis', 'extensions'), join(ws, 'ext-link'))
    const viaLink = await call('POST', '/v1/sessions', { roots: [join(ws, 'ext-link')] })
    assert.equal(viaLink.body.error.code, 'policy.root-in-vis-folder')
    // The project itself, and a folder merely named like it, are roots as before.
    mkdirSync(join(ws, '.visible'))
    for (const root of [project, join(ws, '.visible')]) {
      const r = await call('POST', '/v1/sessions', { roots: [root] })
      assert.equal(r.status, 201, `${root}: ${r.text}`)
      await call('DELETE', `/v1/sessions/${r.body.id}`)
    }
  })

  test('a root that contains the vis home is allowed; the home is masked inside the jail', async () => {
    writeFileSync(join(base, 'mine.txt'), 'MINE\n')
    const hostFiles = readdirSync(home)
    assert.ok(hostFiles.length > 1, `the home has files on the host: ${hostFiles}`)
    const r = await call('POST', '/v1/sessions', { roots: [base] })
    assert.equal(r.status, 201, r.text)
    const code = [
      'import os',
      `print(open(${JSON.stringify(join(base, 'mine.txt'))}).read().strip())`,
      `print(sorted(os.listdir(${JSON.stringify(home)})))`,
      'for name in ' + JSON.stringify(hostFiles) + ':',
      '    try:',
      `        open(os.path.join(${JSON.stringify(home)}, name), "rb").read(1)`,
      '        print("READ", name)',
      '    except OSError as e:',
      '        pass',
    ].join('\n')
    const b = await call('POST', `/v1/sessions/${r.body.id}/blocks`, { code, timeout_ms: 30_000 })
    assert.equal(b.body.status, 'done', b.text)
    const [mine, listing, ...rest] = (b.body.stdout as string).trim().split('\n')
    assert.equal(mine, 'MINE')
    // Only mount points show through the mask: the worker's own outbox, the extensions' mask.
    assert.ok(["['outbox']", "['extensions', 'outbox']"].includes(listing as string), listing)
    assert.deepEqual(rest, [], 'no file of the vis home is readable in the jail')
    // Nor through the host's file tools, which run outside the jail.
    writeFileSync(join(home, 'token.txt'), 'HOME-SECRET\n')
    const viaTool = await call('POST', `/v1/sessions/${r.body.id}/blocks`, {
      code: `print(await cat(${JSON.stringify(join(home, 'token.txt'))}))`,
      timeout_ms: 30_000,
    })
    assert.doesNotMatch(viaTool.text, /HOME-SECRET/)
    assert.equal(viaTool.body.error?.code, 'block.host', viaTool.text)
    assert.match(viaTool.body.error.message, /which sessions cannot reach/)
    await call('DELETE', `/v1/sessions/${r.body.id}`)
  })

  test('a pseudo-filesystem mounted elsewhere (a bind of /proc) is refused by its type', () => {
    // In a private mount namespace, so the host's mounts are untouched.
    const dir = tmp('proc-bind')
    const script = join(here, 'roots-check.ts')
    const r = spawnSync(
      'unshare',
      [
        '-Urm',
        'sh',
        '-c',
        `mount --rbind /proc "$1" && exec "$2" --import tsx "$3" "$1"`,
        'sh',
        dir,
        process.execPath,
        script,
      ],
      { encoding: 'utf8', cwd: repo },
    )
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^policy\.root-pseudo-fs: .*on a proc filesystem/m)
    // Unmounted, the same directory is an ordinary root.
    const plain = spawnSync(process.execPath, ['--import', 'tsx', script, dir], {
      encoding: 'utf8',
      cwd: repo,
    })
    assert.equal(plain.stdout.trim(), 'ok', plain.stderr)
  })
})

describe('the operator allow-list (--allow-root, VIS_ALLOW_ROOTS)', () => {
  const allowed = tmp('allowed')
  mkdirSync(join(allowed, 'proj'))
  symlinkSync(outside, join(allowed, 'escape'))

  test('flags beat the environment, which is PATH-style; relative paths are refused', () => {
    assert.equal(allowRootsFrom([], undefined), undefined)
    assert.equal(allowRootsFrom([], ''), undefined)
    assert.deepEqual(allowRootsFrom([], '/a:/b/'), ['/a', '/b'])
    assert.deepEqual(allowRootsFrom(['/c'], '/a'), ['/c'])
    assert.throws(() => allowRootsFrom(['rel'], undefined), /absolute directories, not rel/)
  })

  test('vis serve --allow-root: inside is allowed, outside and a symlink out are refused', async () => {
    for (const [args, envList] of [[['--allow-root', allowed]], [[], allowed]] as [string[], string?][]) {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        VIS_HOME: tmp('serve-home'),
        VIS_TOKEN: 'roots-test-token-0123456789',
      }
      delete env.VIS_ALLOW_ROOTS
      if (envList) env.VIS_ALLOW_ROOTS = envList
      const s = await spawnServe([...args, '--pool', '0', ...(python ? ['--python', python] : [])], env)
      try {
        assert.equal(s.child.exitCode, null, s.err())
        const url = /serving (http:\/\/\S+)/.exec(s.out())![1]!
        const call = client(url, { authorization: `Bearer ${env.VIS_TOKEN}` })
        const ok = await call('POST', '/v1/sessions', { roots: [join(allowed, 'proj')] })
        assert.equal(ok.status, 201, ok.text)
        for (const root of [outside, join(allowed, 'escape'), `${allowed}/proj/../..`]) {
          const r = await call('POST', '/v1/sessions', { roots: [root] })
          assert.equal(r.status, 400, `${root}: ${r.text}`)
          assert.equal(r.body.error.code, 'policy.root-not-allowed')
          assert.match(r.body.error.message, /--allow-root/)
        }
        // The rules apply inside the list too.
        const pseudo = await call('POST', '/v1/sessions', { roots: ['/proc'] })
        assert.equal(pseudo.body.error.code, 'policy.root-pseudo-fs')
      } finally {
        s.child.kill('SIGTERM')
        await new Promise((r) => s.child.once('exit', r))
      }
    }
  })
})

// The race: Y's root A/sub is checked, then (paused right there) another client with the wider
// root A swaps A/sub for a symlink to the outside, then the jail is built.
function swapOnce(sub: string): { fired: () => number } {
  let fired = 0
  setRootsCheckedHook(async (roots: readonly OpenedRoot[]) => {
    if (fired > 0 || !roots.some((r) => r.path === sub)) return
    fired++
    renameSync(sub, `${sub}.orig`)
    symlinkSync(outside, sub)
  })
  return { fired: () => fired }
}
const restore = (sub: string) => {
  setRootsCheckedHook(undefined)
  spawnSync('rm', ['-f', sub])
  renameSync(`${sub}.orig`, sub)
}
const READ_SECRET = (sub: string) =>
  [
    'import os',
    `print(sorted(os.listdir(${JSON.stringify(sub)})))`,
    'try:',
    `    print(open(${JSON.stringify(join(sub, 'secret.txt'))}).read().strip())`,
    'except OSError as e:',
    '    print(type(e).__name__)',
  ].join('\n')

describe('narrowing raced by a symlink swap', () => {
  const A = tmp('wide')
  const sub = join(A, 'sub')
  mkdirSync(sub)
  writeFileSync(join(sub, 'inside.txt'), 'inside\n')
  let server: VisServer
  let call: ReturnType<typeof client>
  const token = 'race-test-token-0123456789'
  before(async () => {
    ;({ server, call } = await testServer({
      home: tmp('race-home'),
      pool: { size: 0 },
      token,
      allowRoots: [A],
      mcp: { roots: [A], network: { enabled: false, allow: [], deny: [] } },
    }))
  })
  after(async () => {
    setRootsCheckedHook(undefined)
    await server.close()
  })

  test('over MCP: the session Y starts after the swap sees A/sub as checked, never the outside', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    })
    const opts = { roots: () => [sub] }
    const y = withRoots(new Client({ name: 'Y', version: '1' }, clientOptions(opts)), opts)
    await y.connect(transport, { timeout: 60_000 })
    const swap = swapOnce(sub)
    try {
      const r = (await y.callTool(
        { name: 'python_execution', arguments: { code: READ_SECRET(sub) } },
        undefined,
        {
          timeout: 120_000,
        },
      )) as CallToolResult
      assert.equal(swap.fired(), 1, 'the swap landed between the check and the mount')
      const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
      assert.doesNotMatch(text, /OUTSIDE-SECRET/)
      assert.match(text, /\['inside\.txt'\]/)
      assert.match(text, /FileNotFoundError/)
    } finally {
      restore(sub)
      await y.close()
    }
  })

  test('over HTTP: a session and every shell call mount what was checked', async () => {
    const created = await call('POST', '/v1/sessions', { roots: [sub], shell: true })
    assert.equal(created.status, 201, created.text)
    const id = created.body.id
    // The session's tool network starts with its first shell call; after it, each call builds
    // a jail of its own, and the swap lands between that jail's check and its mount.
    const warm = await call('POST', `/v1/sessions/${id}/blocks`, {
      code: 'await shell("true")',
      timeout_ms: 60_000,
    })
    assert.equal(warm.body.status, 'done', warm.text)
    const swap = swapOnce(sub)
    try {
      const code = `r = await shell(${JSON.stringify(`ls ${sub}; cat ${sub}/secret.txt`)})\nprint(r)`
      const b = await call('POST', `/v1/sessions/${id}/blocks`, { code, timeout_ms: 60_000 })
      assert.equal(swap.fired(), 1, 'the swap landed between the check and the mount')
      assert.doesNotMatch(b.text, /OUTSIDE-SECRET/)
      assert.match(b.text, /inside\.txt/)
    } finally {
      restore(sub)
    }
    // Swapped for good, the root now leads outside the allow-list: new jails are refused.
    renameSync(sub, `${sub}.orig`)
    symlinkSync(outside, sub)
    try {
      const again = await call('POST', '/v1/sessions', { roots: [sub] })
      assert.equal(again.status, 400, again.text)
      assert.equal(again.body.error.code, 'policy.root-not-allowed')
      const b = await call('POST', `/v1/sessions/${id}/blocks`, {
        code: `print(await shell(${JSON.stringify(`cat ${sub}/secret.txt`)}))`,
        timeout_ms: 60_000,
      })
      assert.doesNotMatch(b.text, /OUTSIDE-SECRET/)
      // The session's root is pinned too: its host tools refuse the swapped path before a jail
      // is built (policy.root-changed), as the jail would (policy.root-not-allowed).
      assert.match(b.text, /policy\.root-changed|no longer the directory it was|policy\.root-not-allowed/)
    } finally {
      restore(sub)
    }
  })
})

describe('a package reached through a symlink (npm link, --preserve-symlinks)', () => {
  test('sessions start whether or not a root contains the link', async () => {
    const dir = tmp('linked')
    symlinkSync(repo, join(dir, 'vis'))
    const ws = tmp('linked-ws')
    const script = join(dir, 'start.mjs')
    writeFileSync(
      script,
      [
        `const { createRuntime } = await import(${JSON.stringify(join(dir, 'vis', 'dist', 'index.js'))})`,
        `const rt = await createRuntime({ home: ${JSON.stringify(tmp('linked-home'))}, pool: { size: 0 }${python ? `, python: ${JSON.stringify(python)}` : ''} })`,
        'try {',
        `  for (const root of [${JSON.stringify(ws)}, ${JSON.stringify(dir)}]) {`,
        '    const s = await rt.createSession({ roots: [root] })',
        "    const r = await s.runBlock('print(6 * 7)')",
        "    console.log(root === process.argv[2] ? 'ws' : 'link-root', r.stdout.trim())",
        '    await s.dispose()',
        '  }',
        '} finally { await rt.close() }',
      ].join('\n'),
    )
    const child = spawn(process.execPath, ['--preserve-symlinks', '--preserve-symlinks-main', script, ws], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      err += d
    })
    const code = await new Promise((r) => child.once('exit', r))
    assert.equal(code, 0, err)
    assert.equal(out, 'ws 42\nlink-root 42\n', err)
  })
})

describe('child sessions (sub_loop(roots=...)) use the same rules, bounded by the parent', () => {
  test('a child root inside the parent is kept and bounded by it; outside or through a link out is refused', () => {
    const A = tmp('parent')
    mkdirSync(join(A, 'sub'))
    symlinkSync(outside, join(A, 'out'))
    const parent = normalizePolicy({ roots: [A] })
    const child = childPolicy(parent, [join(A, 'sub')], 's-child')
    assert.deepEqual(child.roots, [join(A, 'sub')])
    assert.deepEqual(child.within, [A])
    assert.deepEqual(childPolicy(parent, undefined, 's-child').roots, [A])
    for (const roots of [[outside], [join(A, 'out')], [`${A}/sub/../..`]]) {
      assert.throws(() => childPolicy(parent, roots, 's-child'), { code: 'policy.root-not-allowed' })
    }
    assert.throws(() => childPolicy(parent, ['/proc/self'], 's-child'), { code: 'policy.root-pseudo-fs' })
    assert.throws(() => childPolicy(normalizePolicy({}), [A], 's-child'), { code: 'policy.root-not-allowed' })
  })

  test("a child's roots are pinned from the parent's pinned roots, never from what their paths name now", () => {
    const A = tmp('pinned-parent')
    mkdirSync(join(A, 'sub'))
    const pins = pinRoots([A], {})
    const parent = normalizePolicy({ roots: [A], pins })
    // Unchanged: the child's pins are the parent's identities (and the one beneath it).
    const same = childPolicy(parent, undefined, 's-child')
    assert.deepEqual(same.pins, pins)
    const narrow = childPolicy(parent, [join(A, 'sub')], 's-child')
    assert.deepEqual(Object.keys(narrow.pins ?? {}), [join(A, 'sub')])
    // The parent's root renamed away and a link to a directory with a `sub` put in its place.
    const S = tmp('pinned-swap')
    mkdirSync(join(S, 'sub'))
    renameSync(A, `${A}.orig`)
    symlinkSync(S, A)
    for (const roots of [undefined, [A], [join(A, 'sub')]]) {
      assert.throws(() => childPolicy(parent, roots, 's-child'), { code: 'policy.root-changed' })
    }
  })
})

describe('roots that expose the server (MCP)', () => {
  const base = tmp('mcp-ws')
  const home = join(base, '.vis')
  let server: VisServer
  const token = 'mcp-roots-token-0123456789'
  before(async () => {
    // The server's root is a workspace that contains its own vis home (a workspace at $HOME).
    ;({ server } = await testServer({
      home,
      pool: { size: 0 },
      token,
      mcp: { roots: [base, '/proc'], network: { enabled: false, allow: [], deny: [] } },
    }))
  })
  after(async () => {
    await server.close()
  })

  const connect = async (roots: string[]) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    })
    const opts = { roots: () => roots }
    const c = withRoots(new Client({ name: 'roots', version: '1' }, clientOptions(opts)), opts)
    await c.connect(transport, { timeout: 60_000 })
    return c
  }
  const run = async (c: Client, code: string) => {
    const r = (await c.callTool({ name: 'python_execution', arguments: { code } }, undefined, {
      timeout: 120_000,
    })) as CallToolResult
    return {
      isError: r.isError === true,
      text: r.content.map((x) => (x.type === 'text' ? x.text : '')).join('\n'),
    }
  }

  test("a client narrowed to the server's /proc or to the vis home gets the rule, not a session", async () => {
    for (const [roots, why] of [
      [['/proc'], /kernel pseudo-filesystems/],
      [[home], /lies inside the vis home/],
    ] as [string[], RegExp][]) {
      const c = await connect(roots)
      try {
        const r = await run(c, 'print(open("/proc/self/environ").read())')
        assert.equal(r.isError, true, r.text)
        assert.match(r.text, why)
        assert.doesNotMatch(r.text, /VIS_|PATH=/)
      } finally {
        await c.close()
      }
    }
  })

  test('a client narrowed to the workspace around the home gets a session with the home masked', async () => {
    writeFileSync(join(base, 'mine.txt'), 'MINE\n')
    const c = await connect([base])
    try {
      const r = await run(
        c,
        `import os\nprint(open(${JSON.stringify(join(base, 'mine.txt'))}).read().strip())\nprint([f for f in os.listdir(${JSON.stringify(home)}) if f not in ("outbox", "extensions")])`,
      )
      assert.equal(r.isError, false, r.text)
      assert.match(r.text, /MINE\s+\[\]/)
    } finally {
      await c.close()
    }
  })
})

describe('warm-pool refills check their roots too', () => {
  test('a refill started while the root leads outside is refused; no session gets a worker that sees outside', async () => {
    const A = tmp('pool')
    const sub = join(A, 'sub')
    mkdirSync(sub)
    writeFileSync(join(sub, 'inside.txt'), 'inside\n')
    const rt = await createRuntime({
      home: tmp('pool-home'),
      pool: { size: 1 },
      ...(python ? { python } : {}),
    })
    const policy = { roots: [sub], within: [A] }
    // The swap lands during the first session's spawn (after its check); the refill that follows
    // it finds the root leading outside.
    const swap = swapOnce(sub)
    try {
      const s1 = await rt.createSession(policy)
      assert.equal(swap.fired(), 1)
      const o1 = await s1.runBlock(READ_SECRET(sub))
      assert.doesNotMatch(o1.stdout ?? '', /OUTSIDE-SECRET/)
      assert.match(o1.stdout ?? '', /\['inside\.txt'\]/)
      await rt.poolSettled()
    } finally {
      restore(sub)
    }
    try {
      const s2 = await rt.createSession(policy)
      const o2 = await s2.runBlock(READ_SECRET(sub))
      assert.doesNotMatch(o2.stdout ?? '', /OUTSIDE-SECRET/)
      assert.match(o2.stdout ?? '', /\['inside\.txt'\]/)
    } finally {
      await rt.close()
    }
  })
})

describe('pins under a mask come through the root fd', () => {
  test('a pin that a symlink leads out of its root is refused; one inside is opened', () => {
    const A = tmp('pins')
    mkdirSync(join(A, 'in'))
    symlinkSync(outside, join(A, 'out'))
    const opened = openRoots([A], {})
    try {
      const root = opened.roots[0] as OpenedRoot
      const fd = openBelow(root, join(A, 'in'))
      assert.ok(fd > 2)
      closeSync(fd)
      assert.throws(() => openBelow(root, join(A, 'out')), { code: 'policy.root-not-allowed' })
    } finally {
      opened.close()
    }
  })
})
