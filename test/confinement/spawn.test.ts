import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { sandboxEnvironment } from '../../src/confinement/environment.js'
import { launcherPath } from '../../src/confinement/native.js'
import { probe } from '../../src/confinement/probe.js'
import { verifySeccomp } from '../../src/confinement/seccomp.js'
import { spawnConfined } from '../../src/confinement/spawn.js'
import { ConfinementPolicySchema } from '../../src/contracts/jail-policy.js'
import { isVisError } from '../../src/util/errors.js'
import { packageRoot } from '../../src/util/home.js'

const here = dirname(fileURLToPath(import.meta.url))

before(() => {
  process.env.VIS_HOME = mkdtempSync(join(tmpdir(), 'vis-home-'))
})

function collect(
  child: import('node:child_process').ChildProcess,
): Promise<{ out: string; err: string; code: number | null }> {
  return new Promise((resolve) => {
    let out = ''
    let err = ''
    child.stdout?.on('data', (d) => {
      out += d
    })
    child.stderr?.on('data', (d) => {
      err += d
    })
    child.on('close', (code) => resolve({ out, err, code }))
  })
}

test('a confined node installs seccomp on every thread; exec and inet are refused, threads still work', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-root-'))
  const p = await spawnConfined(
    { roots: [root], readOnly: [packageRoot] },
    process.execPath,
    ['--import', import.meta.resolve('tsx'), join(here, 'node-probe.ts')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  assert.equal(p.layers.namespaces, true)
  assert.ok(p.layers.landlock >= 1)
  assert.deepEqual(p.layers.unenforced, [])
  const r = await collect(p.child)
  assert.equal(r.code, 0, r.err)
  const got = JSON.parse(r.out.trim().split('\n').pop() ?? '{}')
  assert.equal(got.report.ok, true)
  assert.ok(got.report.threads >= 5, `threads: ${got.report.threads}`)
  assert.equal(got.exec, 'EPERM')
  assert.notEqual(got.passwd, 'allowed')
  assert.equal(got.tcp, 'EAFNOSUPPORT')
  assert.equal(got.thread, '42')
  assert.equal(got.noNewPrivs, true)
  assert.equal(got.capEff, '0000000000000000')
})

test('the wall clock kill ends the whole sandbox tree', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-root-'))
  const p = await spawnConfined({ roots: [root], readOnly: [] }, process.execPath, [
    '-e',
    'setInterval(() => {}, 1000)',
  ])
  setTimeout(() => p.kill(), 300)
  const exit = await p.exited
  assert.equal(exit.signal, 'SIGKILL')
})

test('the environment is allow-listed and refuses loader variables', () => {
  const policy = ConfinementPolicySchema.parse({ roots: ['/r'], network: { enabled: true } })
  const env = sandboxEnvironment(
    policy,
    { VIS_X: '1' },
    { AWS_SECRET_ACCESS_KEY: 'x', LANG: 'C.UTF-8', HOME: '/root' },
  )
  assert.equal(env.AWS_SECRET_ACCESS_KEY, undefined)
  assert.equal(env.HOME, '/r')
  assert.equal(env.HTTPS_PROXY, 'http://127.0.0.1:3128')
  assert.equal(env.VIS_X, '1')
  assert.throws(
    () => sandboxEnvironment(policy, { LD_PRELOAD: '/x.so' }),
    (e) => isVisError(e, 'confine.env-forbidden'),
  )
})

test('fails closed when a layer is missing, and the opt-out reports it loudly', async () => {
  const saved = process.env.VIS_BWRAP
  process.env.VIS_BWRAP = '/nonexistent/bwrap'
  try {
    const report = probe({ fresh: true })
    assert.equal(report.bubblewrap, null)
    const root = mkdtempSync(join(tmpdir(), 'vis-root-'))
    await assert.rejects(
      spawnConfined({ roots: [root] }, process.execPath, ['-e', '0'], { allowUnconfined: false }),
      (e) => isVisError(e, 'confine.unavailable') && /bubblewrap/.test(e.message),
    )
    const p = await spawnConfined({ roots: [root] }, process.execPath, ['-e', '0'], {
      allowUnconfined: true,
      stdio: 'ignore',
    })
    assert.equal(p.layers.namespaces, false)
    assert.ok(p.layers.unenforced.some((u) => u.includes('bubblewrap')))
    await p.exited
  } finally {
    if (saved === undefined) delete process.env.VIS_BWRAP
    else process.env.VIS_BWRAP = saved
    probe({ fresh: true })
  }
})

test('vis doctor reports every layer on this machine and exits by the worst level', () => {
  // the CLI's own dispatcher, from source
  const main = join(packageRoot, 'src', 'cli', 'main.ts')
  const code = `import(${JSON.stringify(main)}).then((m) => m.main(['doctor', '--json']))`
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], {
    encoding: 'utf8',
    env: process.env,
  })
  const report = JSON.parse(r.stdout)
  assert.equal(r.status, report.exitCode)
  const ids = report.checks.map((c: { id: string }) => c.id)
  for (const id of [
    'kernel',
    'landlock',
    'seccomp',
    'bubblewrap',
    'ns.user',
    'ns.net',
    'cgroup.memory',
    'cgroup.pids',
    'nsenter',
  ]) {
    assert.ok(ids.includes(id), id)
  }
  assert.equal(report.landlockAbi, probe().landlockAbi)
  assert.ok(report.landlockAbi >= 1, 'this machine has Landlock (runtime-notes: ABI 7)')
  assert.match(report.kernel, /^\d+\.\d+/)
})

test('vis-launcher closes every fd past the kept ones, so host fds never reach the guest', async () => {
  const launcher = launcherPath()
  assert.ok(launcher, 'vis-launcher is built')
  const fd = openSync('/etc/hostname', 'r')
  const list = (keep: number) =>
    new Promise<string[]>((resolve) => {
      const child = spawn(
        launcher,
        ['--no-landlock', '--keep-fds', String(keep), '--', '/bin/ls', '/proc/self/fd'],
        {
          stdio: ['ignore', 'pipe', 'inherit', 'ignore', 'ignore', 'ignore', 'ignore', fd],
        },
      )
      let out = ''
      child.stdout?.on('data', (d) => {
        out += d
      })
      child.on('close', () => resolve(out.split(/\s+/).filter(Boolean)))
    })
  try {
    assert.ok((await list(8)).includes('7'), 'control: a kept fd is inherited')
    assert.ok(!(await list(3)).includes('7'))
  } finally {
    closeSync(fd)
  }
})

test('verifySeccomp refuses a process whose threads carry no filter', () => {
  // this test process never installed one
  assert.throws(
    () => verifySeccomp(),
    (e) => isVisError(e, 'confine.seccomp-unverified'),
  )
})
