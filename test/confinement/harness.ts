import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer as createHttpServer, type Server } from 'node:http'
import { createServer, type Server as NetServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createSandboxCgroup, detectCgroups } from '../../src/confinement/cgroup.js'
import { sandboxEnvironment } from '../../src/confinement/environment.js'
import { findNative, launcherPath } from '../../src/confinement/native.js'
import { bubblewrapArgs, launcherArgs } from '../../src/confinement/sandbox-args.js'
import { spawnConfined } from '../../src/confinement/spawn.js'
import { type ConfinementPolicy, ConfinementPolicySchema } from '../../src/contracts/jail-policy.js'
import { packageRoot } from '../../src/util/home.js'
import type { AttackCase } from './cases.js'

const here = dirname(fileURLToPath(import.meta.url))

// 'all' is the production path (spawnConfined + seccomp); the others apply one layer alone.
export type Layer = 'all' | 'none' | 'namespaces' | 'landlock' | 'rlimits' | 'seccomp'
export const LAYERS: Layer[] = ['none', 'namespaces', 'landlock', 'rlimits', 'seccomp', 'all']

export type Verdict = 'contained' | 'escaped' | 'ok' | 'killed' | 'error'
export type CaseResult = {
  verdict: Verdict
  stdout: string
  stderr: string
  code: number | null
  signal: string | null
}

export const LIMITS = { memoryMb: 256, processes: 64, openFiles: 128, diskMb: 16, wallClockMs: 20_000 }

export function distributionRoot(): string {
  const staged = join(packageRoot, 'cpython-dist', '3.11', 'linux-x86_64-gnu', 'python')
  if (existsSync(join(staged, 'bin', 'python3.11'))) return staged
  return '/root/.pyenv/versions/3.11.7'
}

export type Harness = {
  outside: string
  caseDir: string
  hostPort: number
  hostUnix: string
  abstractName: string
  python: string
  dist: string
  close(): Promise<void>
}

// Host-side targets the attacks aim at: a secret file outside every root, an HTTP
// server on host loopback, a pathname and an abstract unix socket.
export async function startHarness(): Promise<Harness> {
  const base = mkdtempSync(join(tmpdir(), 'vis-attack-'))
  const outside = join(base, 'outside')
  const caseDir = join(base, 'cases')
  mkdirSync(outside)
  mkdirSync(caseDir)
  writeFileSync(join(outside, 'secret.txt'), 'top secret')
  const http: Server = createHttpServer((_req, res) => res.end('hello from host'))
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()))
  const hostPort = (http.address() as { port: number }).port
  const hostUnix = join(base, 'host.sock')
  const abstractName = `vis-attack-${process.pid}`
  const unixServers: NetServer[] = [hostUnix, `\0${abstractName}`].map((path) => {
    const s = createServer((sock) => sock.end('host-unix'))
    s.listen(path)
    return s
  })
  const dist = distributionRoot()
  return {
    outside,
    caseDir,
    hostPort,
    hostUnix,
    abstractName,
    dist,
    python: join(dist, 'bin', 'python3.11'),
    async close() {
      http.closeAllConnections()
      await new Promise((r) => http.close(r))
      for (const s of unixServers) s.close()
      rmSync(base, { recursive: true, force: true })
    },
  }
}

function verdictOf(stdout: string, code: number | null, signal: string | null): Verdict {
  if (stdout.includes('ESCAPED')) return 'escaped'
  if (stdout.includes('PRELUDE-FAIL')) return 'error'
  if (stdout.includes('CONTAINED')) return 'contained'
  if (/^OK\b/m.test(stdout)) return 'ok'
  if (signal) return 'killed'
  // bubblewrap reports a child killed by SIGKILL (the OOM killer) as 128 + 9
  if (code === 137) return 'killed'
  return 'error'
}

export async function runCase(h: Harness, c: AttackCase, layer: Layer = 'all'): Promise<CaseResult> {
  const root = mkdtempSync(join(tmpdir(), 'vis-case-root-'))
  const script = join(h.caseDir, `${c.id}.py`)
  writeFileSync(script, `${readFileSync(join(here, 'prelude.py'), 'utf8')}\n${c.source}\n`)
  const seccompLib = findNative('libvis_seccomp.so')
  if (!seccompLib) throw new Error('libvis_seccomp.so is not built (npm run build:addon)')
  const network = c.network === true
  const policy: ConfinementPolicy = ConfinementPolicySchema.parse({
    roots: [root],
    readOnly: [h.dist, h.caseDir, dirname(seccompLib), ...(network ? [packageRoot] : [])],
    network: { enabled: network, allow: c.allow ?? [], deny: ['denied.example'] },
    shell: c.shell === true,
    limits: LIMITS,
  })
  const withSeccomp = layer === 'all' || layer === 'seccomp'
  const env: Record<string, string> = {
    VIS_TEST_ROOT: root,
    VIS_TEST_OUTSIDE: h.outside,
    VIS_TEST_DIST: h.dist,
    VIS_TEST_HOST_PORT: String(h.hostPort),
    VIS_TEST_HOST_PID: String(process.pid),
    VIS_TEST_HOST_UNIX: h.hostUnix,
    VIS_TEST_ABSTRACT: h.abstractName,
    VIS_TEST_NETWORK: network ? '1' : '0',
    VIS_TEST_PROCESSES: c.shell ? '1' : '0',
    ...(withSeccomp ? { VIS_TEST_SECCOMP_LIB: seccompLib } : {}),
  }
  const program = network && layer === 'all' ? process.execPath : h.python
  const programArgs =
    network && layer === 'all'
      ? ['--import', import.meta.resolve('tsx'), join(here, 'shim.ts'), h.python, script]
      : [script]

  try {
    if (layer === 'all') {
      const p = await spawnConfined(policy, program, programArgs, { env, stdio: ['ignore', 'pipe', 'pipe'] })
      return await collect(p.child, () => p.kill())
    }
    const launcher = launcherPath()
    if (!launcher) throw new Error('vis-launcher is not built')
    const input = { policy, command: program, launcher, landlockAbi: 7 }
    const fullEnv = sandboxEnvironment(policy, env)
    let argv: string[]
    if (layer === 'namespaces') {
      const bw = bubblewrapArgs(input).filter((a, i, all) => a !== '--cap-add' && all[i - 1] !== '--cap-add')
      argv = ['bwrap', ...bw, '--', program, ...programArgs]
    } else if (layer === 'landlock') {
      const la = launcherArgs(input, { inNamespace: false }).filter(
        (a, i, all) =>
          !['--nofile', '--nproc', '--fsize'].includes(a) &&
          !['--nofile', '--nproc', '--fsize'].includes(all[i - 1] ?? ''),
      )
      argv = [launcher, ...la, '--', program, ...programArgs]
    } else if (layer === 'rlimits') {
      const o = policy.limits
      argv = [
        launcher,
        '--no-landlock',
        '--nofile',
        String(o.openFiles),
        '--nproc',
        String(o.processes),
        '--fsize',
        String((o.diskMb ?? 16) << 20),
        '--',
        program,
        ...programArgs,
      ]
    } else {
      argv = [program, ...programArgs]
    }
    // Safety net for partial layers (not counted as a layer): the memory/pids cgroup,
    // and a shell parent so a case that kills its parent does not kill this runner.
    const cg = createSandboxCgroup(detectCgroups(), `vis-layers-${process.pid}-${c.id}`, policy.limits)
    const join = 'for f; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; shift; done; shift; "$@"'
    const child = spawn('/bin/sh', ['-c', join, 'vis-layers', ...cg.procsFiles, '--', ...argv], {
      env: fullEnv,
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const result = await collect(child, () => {
      for (const pid of cg.pidsInGroup()) process.kill(pid, 'SIGKILL')
    })
    for (let i = 0; i < 20 && cg.dirs.length > 0; i++) {
      for (const pid of cg.pidsInGroup()) process.kill(pid, 'SIGKILL')
      cg.dispose()
      await new Promise((r) => setTimeout(r, 25))
    }
    return result
  } finally {
    // an unconfined run of kernel.mount really mounts over the root
    if (layer !== 'all') spawnSync('umount', ['-l', root], { stdio: 'ignore' })
    rmSync(root, { recursive: true, force: true })
  }
}

function collect(child: import('node:child_process').ChildProcess, kill: () => void): Promise<CaseResult> {
  return new Promise((resolve) => {
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (d) => {
      stdout += d
    })
    child.stderr?.on('data', (d) => {
      stderr += d
    })
    const timer = setTimeout(kill, LIMITS.wallClockMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ verdict: verdictOf(stdout, code, signal), stdout, stderr, code, signal })
    })
  })
}
