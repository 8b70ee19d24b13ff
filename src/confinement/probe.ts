import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { release } from 'node:os'
import { join } from 'node:path'
import { z } from 'zod'
import { LimitsSchema } from '../contracts/jail-policy.js'
import { hostTarget } from '../distribution/platform.js'
import { explainLocally } from '../distribution/resolve.js'
import { packageRoot, visHome } from '../util/home.js'
import { canCreateChild, detectCgroups } from './cgroup.js'
import { findNative, launcherPath, loadConfineAddon } from './native.js'

export const CheckSchema = z.object({
  id: z.string(),
  level: z.enum(['info', 'warn', 'error']),
  message: z.string(),
})
export type Check = z.infer<typeof CheckSchema>

const NamespacesSchema = z.object({
  user: z.boolean(),
  mount: z.boolean(),
  pid: z.boolean(),
  net: z.boolean(),
  ipc: z.boolean(),
})

export const ProbeReportSchema = z.object({
  kernel: z.string(),
  landlockAbi: z.number(), // < 0: -errno, Landlock unavailable; NaN never
  seccomp: z.boolean(),
  namespaces: NamespacesSchema,
  cgroups: z.object({
    versions: z.array(z.enum(['v1', 'v2'])),
    memory: z
      .object({ version: z.enum(['v1', 'v2']), parent: z.string(), canCreate: z.boolean() })
      .nullable(),
    pids: z.object({ version: z.enum(['v1', 'v2']), parent: z.string(), canCreate: z.boolean() }).nullable(),
  }),
  bubblewrap: z.object({ path: z.string(), version: z.string() }).nullable(),
  launcher: z.string().nullable(),
  addon: z.string().nullable(),
  distributions: z.array(
    z.object({
      root: z.string(),
      version: z.string(),
      platform: z.string(),
      packages: z.array(z.string()).optional(),
    }),
  ),
  checks: z.array(CheckSchema),
})
export type ProbeReport = z.infer<typeof ProbeReportSchema>

// The Landlock features each ABI adds that the launcher uses.
export const LANDLOCK_FEATURES: [number, string][] = [
  [1, 'filesystem rules'],
  [2, 'cross-directory rename/link (REFER)'],
  [3, 'truncate'],
  [4, 'TCP bind/connect rules'],
  [5, 'device ioctl'],
  [6, 'abstract unix socket and signal scoping'],
]

function findExecutable(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    const p = join(dir || '.', name)
    if (existsSync(p)) return p
  }
  return undefined
}

export function findBubblewrap(): { path: string; version: string } | undefined {
  const path = process.env.VIS_BWRAP ?? findExecutable('bwrap')
  if (!path) return undefined
  const r = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 5000 })
  if (r.status !== 0) return undefined
  return { path, version: r.stdout.trim().replace(/^bubblewrap\s+/, '') }
}

// Actually enters each namespace through bubblewrap: a sysctl or a container
// runtime can forbid one even when the kernel was built with it.
function tryNamespaces(bwrap: string | undefined): z.infer<typeof NamespacesSchema> {
  const attempt = (flags: string[]) => {
    if (!bwrap) return false
    const base = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc']
    const r = spawnSync(bwrap, [...base, ...flags, '--', '/bin/true'], { timeout: 10_000, stdio: 'ignore' })
    return r.status === 0
  }
  return {
    user: attempt(['--unshare-user']),
    mount: attempt(['--unshare-user']), // bubblewrap always makes a mount namespace
    pid: attempt(['--unshare-user', '--unshare-pid']),
    net: attempt(['--unshare-user', '--unshare-net']),
    ipc: attempt(['--unshare-user', '--unshare-ipc']),
  }
}

// Staged beside the package (a checkout) or in the per-user cache (an installed package).
function findDistributions(): ProbeReport['distributions'] {
  return [
    ...findDistributionsIn(join(packageRoot, 'cpython-dist')),
    ...findDistributionsIn(join(visHome(), 'python', 'runtime')),
  ]
}

function findDistributionsIn(base: string): ProbeReport['distributions'] {
  const out: ProbeReport['distributions'] = []
  if (!existsSync(base)) return out
  for (const minor of readdirSync(base)) {
    const minorDir = join(base, minor)
    let platforms: string[] = []
    try {
      platforms = readdirSync(minorDir)
    } catch {
      continue
    }
    for (const platform of platforms) {
      const manifest = join(minorDir, platform, 'python', 'vis-dist.json')
      if (!existsSync(manifest)) continue
      try {
        const m = JSON.parse(readFileSync(manifest, 'utf8')) as {
          version?: string
          platform?: string
          packages?: string[]
        }
        out.push({
          root: join(minorDir, platform, 'python'),
          version: m.version ?? minor,
          platform,
          ...(m.packages?.length ? { packages: m.packages } : {}),
        })
      } catch {}
    }
  }
  return out
}

let cachedProbe: ProbeReport | undefined

// Probes every layer on this machine. Results are cached per process: spawn
// decisions must not pay for ~10 bubblewrap runs each time.
export function probe(options: { fresh?: boolean } = {}): ProbeReport {
  if (cachedProbe && !options.fresh) return cachedProbe
  const checks: Check[] = []
  const add = (id: string, level: Check['level'], message: string) => checks.push({ id, level, message })

  const kernel = release()
  add('kernel', 'info', `Linux ${kernel}`)
  // issue 37: what this platform is offered (the seam's row): prebuilds and CPython minors.
  try {
    const t = hostTarget()
    add(
      'platform',
      'info',
      `${t.tag} (prebuilds ${t.nodeTuple}, seccomp ${t.seccompArch}); supported CPython here: ${t.minors.join(', ')}`,
    )
  } catch (err) {
    add('platform', 'error', (err as Error).message)
  }

  const addon = loadConfineAddon()
  const addonPath = findNative('vis_confine.node') ?? null
  const landlockAbi = addon ? addon.landlockAbi() : -1
  const seccomp = addon ? addon.seccompAvailable() : false
  if (!addon)
    add(
      'addon',
      'error',
      'vis_confine.node is not built (npm run build:addon): seccomp and the Landlock probe are unavailable',
    )
  if (landlockAbi >= 6) {
    add(
      'landlock',
      'info',
      `Landlock ABI ${landlockAbi}: filesystem, TCP and scoping rules enforced (thread-local on this ABI: applied by vis-launcher before node starts)`,
    )
  } else if (landlockAbi >= 1) {
    const missing = LANDLOCK_FEATURES.filter(([abi]) => abi > landlockAbi).map(([, f]) => f)
    add('landlock', 'warn', `Landlock ABI ${landlockAbi}: not enforced here: ${missing.join(', ')}`)
  } else if (addon) {
    add(
      'landlock',
      'error',
      `Landlock is unavailable (errno ${-landlockAbi}): filesystem rules cannot be enforced`,
    )
  }
  if (addon) {
    add(
      'seccomp',
      seccomp ? 'info' : 'error',
      seccomp ? 'seccomp filters available (TSYNC)' : 'seccomp filters are unavailable',
    )
  }

  const bwrap = findBubblewrap()
  if (bwrap) add('bubblewrap', 'info', `bubblewrap ${bwrap.version} at ${bwrap.path}`)
  else
    add(
      'bubblewrap',
      'error',
      'bubblewrap is not installed (apt-get install bubblewrap): no namespaces, no mount view',
    )

  const namespaces = tryNamespaces(bwrap?.path)
  for (const [ns, ok] of Object.entries(namespaces)) {
    if (ok) add(`ns.${ns}`, 'info', `${ns} namespace: usable`)
    else if (bwrap) add(`ns.${ns}`, 'error', `${ns} namespace: refused on this machine`)
  }

  const layout = detectCgroups()
  const describe = (c: typeof layout.memory) =>
    c ? { version: c.version, parent: c.parent, canCreate: canCreateChild(c) } : null
  const cgroups = { versions: layout.versions, memory: describe(layout.memory), pids: describe(layout.pids) }
  add(
    'cgroups',
    layout.versions.length ? 'info' : 'warn',
    `cgroup hierarchies: ${layout.versions.join(' + ') || 'none'}`,
  )
  for (const name of ['memory', 'pids'] as const) {
    const c = cgroups[name]
    if (c?.canCreate)
      add(
        `cgroup.${name}`,
        'info',
        `${name} controller (${c.version}) at ${c.parent}: per-sandbox groups can be created`,
      )
    else if (c)
      add(
        `cgroup.${name}`,
        'warn',
        `${name} controller (${c.version}) at ${c.parent} is not writable: ${name === 'memory' ? 'no memory limit (RLIMIT_AS is never used)' : 'processes limited by RLIMIT_NPROC only'}`,
      )
    else
      add(
        `cgroup.${name}`,
        'warn',
        `no usable ${name} controller: ${name === 'memory' ? 'no memory limit (RLIMIT_AS is never used)' : 'processes limited by RLIMIT_NPROC only'}`,
      )
  }

  const launcher = launcherPath() ?? null
  if (launcher) add('launcher', 'info', `vis-launcher at ${launcher}`)
  else
    add(
      'launcher',
      'error',
      'vis-launcher is not built (npm run build:addon): Landlock and rlimits cannot be applied',
    )

  // Tool processes (shell, git) join their session's shared network through nsenter.
  if (existsSync('/usr/bin/nsenter'))
    add('nsenter', 'info', 'nsenter at /usr/bin/nsenter (shared tool network)')
  else
    add(
      'nsenter',
      'error',
      'nsenter is not installed (apt-get install util-linux): the shell and git tools cannot start their jails',
    )

  const distributions = findDistributions()
  // What a session gets by default, from every local source in the documented order (so a
  // VIS_PYTHON_HOME or VIS_PYTHON_STAGED_DIR counts): it is what the warning is about.
  const selected = explainLocally()
  const chosen = selected.resolved
  if (selected.error) add('distribution', 'warn', selected.error.message)
  else if (!chosen)
    add(
      'distribution',
      'warn',
      `no CPython ${selected.minor} distribution staged, cached (${join(visHome(), 'python', 'runtime')}) or named by VIS_PYTHON_HOME yet`,
    )
  else if (!distributions.some((d) => d.root === chosen.root))
    add(
      'distribution',
      'info',
      `CPython ${chosen.version} (${chosen.platform}) from ${chosen.source}: ${chosen.root}`,
    )
  for (const d of distributions)
    add(
      'distribution',
      'info',
      `CPython ${d.version} (${d.platform}) at ${d.root}${d.packages ? `; packages: ${d.packages.join(', ')}` : ''}`,
    )

  // The default limits every session gets unless its policy sets its own.
  const l = LimitsSchema.parse({})
  add(
    'limits',
    'info',
    `session defaults: memory ${l.memoryMb} MB (memory cgroup), ${l.processes} processes+threads, ${l.openFiles} open files, ${l.diskMb} MB per file and /tmp, roots may grow ${l.diskBudgetMb} MB (disk budget), wall clock ${l.wallClockMs / 1000} s per block (SIGKILL), output ${l.outputBytes} bytes per block`,
  )

  if (process.env.VIS_ALLOW_UNCONFINED === '1') {
    add('opt-out', 'warn', 'VIS_ALLOW_UNCONFINED=1: sandboxes start even when a layer above is missing')
  }

  cachedProbe = {
    kernel,
    landlockAbi,
    seccomp,
    namespaces,
    cgroups,
    bubblewrap: bwrap ?? null,
    launcher,
    addon: addonPath,
    distributions,
    checks,
  }
  return cachedProbe
}

// 0: info only, 1: warnings, 2: errors.
export function exitCodeFor(checks: Check[]): number {
  if (checks.some((c) => c.level === 'error')) return 2
  if (checks.some((c) => c.level === 'warn')) return 1
  return 0
}
