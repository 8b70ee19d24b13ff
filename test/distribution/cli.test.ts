import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import {
  cliEnv,
  closedPort,
  type Fixtures,
  fixtures,
  MINOR,
  PLATFORM,
  runCli,
  spawnCli,
  tempDir,
} from './helpers.js'

let f: Fixtures
let home: string
let empty: string
const scratch: string[] = []
before(async () => {
  f = await fixtures()
  home = tempDir('vis-dist-home-')
  empty = tempDir()
  scratch.push(home, empty)
})
after(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true })
})

describe('the vis CLI', () => {
  test('help lists every command; <cmd> --help and help <cmd> print its usage', async () => {
    const env = cliEnv({ VIS_HOME: home })
    const top = await runCli(['help'], env)
    assert.equal(top.status, 0)
    assert.match(top.stdout, /Usage: vis <command>/)
    assert.match(top.stdout, /^ {2}runtime +Show, fetch or stage the CPython distribution$/m)
    const a = await runCli(['runtime', '--help'], env)
    const b = await runCli(['help', 'runtime'], env)
    assert.equal(a.status, 0)
    assert.equal(a.stdout, b.stdout)
    assert.match(
      a.stdout,
      /vis runtime stage \[--python 3\.X \| --from-python PATH \| --from-archive PATH\|URL\]/,
    )
  })

  test('an unknown command or option is a usage error (exit 2)', async () => {
    const env = cliEnv({ VIS_HOME: home })
    const r = await runCli(['frobnicate'], env)
    assert.equal(r.status, 2)
    assert.match(r.stderr, /unknown command "frobnicate"/)
    const o = await runCli(['runtime', 'status', '--bogus'], env)
    assert.equal(o.status, 2)
    assert.match(o.stderr, /Unknown option '--bogus'/)
  })

  test('a bad option value or a missing operand is a usage error too (exit 2); help --help is help', async () => {
    const env = cliEnv({ VIS_HOME: home })
    const cases: [string[], RegExp][] = [
      [['sessions', 'list', '--limit', 'x'], /--limit must be a positive integer \[cli\.bad-option\]/],
      [['sessions', 'show'], /vis sessions show needs a session id\./],
      [['bundle', '--python', '3.11'], /give --python 3\.X\[,3\.Y\] and --out DIR .*\[bundle\.usage\]/],
      [['serve', '--port', '99999'], /--port must be 0\.\.65535, not 99999 \[cli\.bad-option\]/],
      [
        ['serve', '--max-connections', '0'],
        /--max-connections must be a positive integer, not 0 \[cli\.bad-option\]/,
      ],
      [
        ['serve', '--trusted-proxy', 'nginx.local'],
        /--trusted-proxy: A trusted proxy is an IP address or a CIDR range .* not "nginx\.local"/,
      ],
      [['run', '--approve', 'maybe', 'task'], /--approve must be ask, approve or deny, not maybe/],
      [
        ['runtime', 'fetch', '--python', '2.7'],
        /Python 2\.7 is not supported; use one of 3\.11, 3\.12, 3\.13 \[dist\.version\]/,
      ],
    ]
    const runs = await Promise.all(cases.map(([args]) => runCli(args, env)))
    runs.forEach((r, i) => {
      const [args, message] = cases[i]!
      assert.equal(r.status, 2, `vis ${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stderr, message)
    })
    const help = await runCli(['help', '--help'], env)
    assert.equal(help.status, 0, help.stderr)
    assert.match(help.stdout, /Usage: vis <command>/)
    // An unsupported minor is named with the supported ones, and not offered for staging.
    const old = await runCli(['runtime', 'status', '--python', '2.7'], env)
    assert.equal(old.status, 2)
    assert.match(old.stdout, /Python 2\.7 is not supported; use one of 3\.11, 3\.12, 3\.13 \[dist\.version\]/)
    assert.doesNotMatch(old.stdout, /vis runtime stage --python 2\.7/)
  })

  test('runtime status shows the resolved distribution and why earlier sources did not answer', async () => {
    const r = await runCli(['runtime', 'status'], cliEnv({ VIS_HOME: home, VIS_PYTHON_STAGED_DIR: f.out }))
    assert.equal(r.status, 0, r.stderr)
    const lines = r.stdout.split('\n')
    assert.equal(lines[0], `Python ${f.staged.version} (${PLATFORM}) from staged: ${f.staged.root}`)
    assert.ok(lines.includes(`  libpython   ${join(f.staged.root, 'lib', `libpython${MINOR}.so.1.0`)}`))
    assert.match(r.stdout, /^ {2}env +no +VIS_PYTHON_HOME is not set$/m)
    assert.match(r.stdout, /^ {2}staged +answered +staged beside the package$/m)
    assert.match(r.stdout, /packages +.*pytest 7\./)
  })

  test('runtime status with nothing available exits 1 and says what to do', async () => {
    const offline = `http://127.0.0.1:${await closedPort()}`
    const r = await runCli(
      ['runtime', 'status', '--json'],
      cliEnv({ VIS_HOME: home, VIS_PYTHON_STAGED_DIR: empty, VIS_PYTHON_DIST_URL: offline }),
    )
    assert.equal(r.status, 1)
    const ex = JSON.parse(r.stdout) as { minor: string; sources: { source: string; reason: string }[] }
    assert.equal(ex.minor, MINOR)
    assert.deepEqual(
      ex.sources.map((s) => s.source),
      ['env', 'staged', 'checkout', 'cache', 'download'],
    )
    const text = await runCli(
      ['runtime', 'status'],
      cliEnv({ VIS_HOME: home, VIS_PYTHON_STAGED_DIR: empty, VIS_PYTHON_DIST_URL: offline }),
    )
    assert.match(text.stdout, /No CPython 3\.11 for linux-x86_64-gnu on this machine yet\./)
    assert.match(text.stdout, /Set VIS_PYTHON_HOME, run `vis runtime stage --python 3\.11`/)
  })

  test('vis serve with no CPython to be had starts, and creating a session answers 503 dist.not-found', {
    timeout: 120_000,
  }, async () => {
    const offline = `http://127.0.0.1:${await closedPort()}`
    const child = spawnCli(
      ['serve', '--port', '0'],
      cliEnv({ VIS_HOME: home, VIS_PYTHON_STAGED_DIR: empty, VIS_PYTHON_DIST_URL: offline, VIS_TOKEN: '' }),
    )
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      err += d
    })
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
    try {
      const deadline = Date.now() + 90_000
      while (!/^try: /m.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      // Said at the start, not first met by the first client.
      assert.match(
        err,
        new RegExp(
          `^vis serve: no CPython 3\\.11 on this machine yet; the first session will download it from ${offline.replace(/\./g, '\\.')}/cpython-3\\.11-`,
          'm',
        ),
      )
      assert.match(err, /`vis runtime fetch --python 3\.11` or `vis runtime stage` gets one ahead of time/)
      const url = /^vis serving (http:\/\/127\.0\.0\.1:\d+) /m.exec(out)?.[1]
      const token = /^open: \S+\/\?token=(\S+)$/m.exec(out)?.[1]
      assert.ok(url && token, out)
      const res = await fetch(`${url}/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      })
      const body = (await res.json()) as { error: { code: string; message: string } }
      // Not 404: the route exists; the server lacks what it needs, which its operator can fix.
      assert.equal(res.status, 503, JSON.stringify(body))
      assert.equal(body.error.code, 'dist.not-found')
      assert.match(body.error.message, /no CPython 3\.11 distribution is available/)
      assert.match(body.error.message, /vis runtime fetch --python 3\.11/)
      assert.match(
        body.error.message,
        /Offline, set VIS_PYTHON_DIST_URL=file:\/\/DIR\/cpython, the cpython\/ of a `vis bundle` DIR/,
      )
      child.kill('SIGTERM')
      assert.equal(await exited, 0, 'SIGTERM stops it cleanly')
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  })

  test('vis doctor judges the CPython a session would get, from every source in order, and says where from', {
    timeout: 120_000,
  }, async () => {
    const offline = `http://127.0.0.1:${await closedPort()}`
    type Report = { checks: { id: string; level: string; message: string }[] }
    const distChecks = (r: { stdout: string }) =>
      (JSON.parse(r.stdout) as Report).checks.filter((c) => c.id === 'distribution')
    const base = { VIS_HOME: home, VIS_PYTHON_STAGED_DIR: empty, VIS_PYTHON_DIST_URL: offline }
    // VIS_PYTHON_HOME answers first: no warning, and the line says which tree sessions use.
    const withHome = await runCli(['doctor', '--json'], cliEnv({ ...base, VIS_PYTHON_HOME: f.staged.root }))
    const fromEnv = distChecks(withHome)
    assert.deepEqual(
      fromEnv.filter((c) => c.level !== 'info'),
      [],
      JSON.stringify(fromEnv),
    )
    assert.ok(
      fromEnv.some(
        (c) => c.message === `CPython ${f.staged.version} (${PLATFORM}) from env: ${f.staged.root}`,
      ),
      JSON.stringify(fromEnv),
    )
    // Nothing answers: a warning naming the minor, and advice naming the URL it would come from.
    const none = await runCli(['doctor'], cliEnv(base))
    assert.match(none.stdout, /^WARN {2}distribution +no CPython 3\.11 distribution staged, cached \(/m)
    assert.match(
      none.stdout,
      /fix: nothing when online, or fetch it ahead: `npx vis runtime fetch --python 3\.11`; offline, /,
    )
    assert.ok(
      none.stdout.includes(
        `until then: the first session downloads CPython 3.11 from ${offline} (about 12 MB)`,
      ),
      none.stdout,
    )
  })

  test('runtime stage refuses contradictory or unknown options with a clear error', async () => {
    const env = cliEnv({ VIS_HOME: home })
    const both = await runCli(
      ['runtime', 'stage', '--python', '3.12', '--from-python', '/usr/bin/python3'],
      env,
    )
    assert.equal(both.status, 1)
    assert.match(both.stderr, /give only one of --python, --from-python, --from-archive \[dist\.stage\]/)
    const extra = await runCli(['runtime', 'stage', '--with', 'no/such'], env)
    assert.equal(extra.status, 1)
    assert.match(extra.stderr, /--with no\/such: not a package name \(known sets: data, web, all;/)
    const unknown = await runCli(['runtime', 'stage', '--with', 'data,leftpad'], env)
    assert.equal(unknown.status, 1)
    assert.match(unknown.stderr, /--with leftpad: unknown to the Debian source .* give --index-url/)
  })

  test('runtime stage --from-archive stages the archive into --out', async () => {
    const out = tempDir()
    scratch.push(out)
    const r = await runCli(
      ['runtime', 'stage', '--from-archive', join(f.release, f.small.file), '--out', out],
      cliEnv({ VIS_HOME: home }),
    )
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, new RegExp(`Staged: Python ${f.staged.version.replace(/\./g, '\\.')} at ${out}/`))
    assert.match(r.stderr, /^unpack: /m)
  })
})
