import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, existsSync, writeFileSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import {
  type ConfinementPolicy,
  type ConfinementPolicyInput,
  ConfinementPolicySchema,
} from '../contracts/jail-policy.js'
import { VisError } from '../util/errors.js'
import { makeHostStateDir } from '../util/host-state-dirs.js'
import { type LiveJailEntry, liveJailEntry } from '../util/live-jails.js'
import { createSandboxCgroup, detectCgroups, type SandboxCgroup } from './cgroup.js'
import { draftMount } from './draft-mount.js'
import { type EgressProxy, startEgressProxy } from './egress/proxy.js'
import { sandboxEnvironment } from './environment.js'
import { openMounts } from './mount-pins.js'
import { packageMounts, pinFds, realish, resolvedReadOnly } from './mount-sources.js'
import { launcherPath } from './native.js'
import { probe } from './probe.js'
import { projectExtensionMasks } from './project-extension-masks.js'
import { maskedHomes, type OpenedRoot, openRoots, rootsChecked } from './root-guard.js'
import { bubblewrapArgs, launcherArgs, missingPaths } from './sandbox-args.js'

export type SpawnConfinedOptions = {
  env?: Record<string, string> // added to the allow-listed environment (LD_* and friends refused)
  stdio?: StdioOptions
  cwd?: string // inside the sandbox; defaults to the first root
  sessionId?: string
  // Start even when a layer is missing. Defaults to VIS_ALLOW_UNCONFINED=1.
  allowUnconfined?: boolean
  // Give the sandbox its own devpts instance (a tool that runs `script`).
  pty?: boolean
  // Join these namespaces (open /proc/<pid>/ns/{user,net} fds of a running sandbox,
  // e.g. a session's tool network holder) instead of a network namespace of its own.
  // No egress proxy is started: the holder's relay serves the shared namespace.
  joinNetwork?: { user: number; net: number }
  // The command never starts another process (a session worker without a shell): it runs
  // as its pid namespace's init, without bubblewrap's reaper process beside it.
  soleProcess?: boolean
}

// Which layers this sandbox actually has; `unenforced` is what a session's
// `access` info must show loudly.
export type LayerStatus = {
  namespaces: boolean
  landlock: number // ABI applied, 0 when not applied
  rlimits: boolean
  memoryCgroup: boolean
  pidsCgroup: boolean
  seccomp: 'worker' // installed in-process by the worker's `confine`
  unenforced: string[]
}

export type ConfinedProcess = {
  child: ChildProcess
  policy: ConfinementPolicy
  layers: LayerStatus
  egress?: EgressProxy
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  // Whether the memory limit's OOM killer has struck in this sandbox. Read it from the
  // child's 'exit' listeners: the group is removed right after.
  outOfMemory(): boolean
  // SIGKILL for the whole tree: bubblewrap's pid namespace dies with its init.
  kill(): void
}

// The missing layers a policy needs, measured by probe().
function missingLayers(policy: ConfinementPolicy): {
  missing: string[]
  warnings: string[]
  landlockAbi: number
} {
  const report = probe()
  const missing: string[] = []
  const warnings: string[] = []
  if (!report.bubblewrap) missing.push('bubblewrap (apt-get install bubblewrap)')
  for (const [ns, ok] of Object.entries(report.namespaces)) if (!ok) missing.push(`${ns} namespace`)
  if (!report.launcher) missing.push('vis-launcher (npm run build:addon)')
  if (!report.addon) missing.push('vis_confine.node (npm run build:addon)')
  if (!report.seccomp) missing.push('seccomp')
  if (report.landlockAbi < 1) missing.push('Landlock')
  else if (policy.network.enabled && report.landlockAbi < 4) missing.push('Landlock TCP rules (ABI 4)')
  if (report.landlockAbi < 6) warnings.push('Landlock signal/abstract-socket scoping (ABI 6)')
  if (!report.cgroups.memory?.canCreate)
    warnings.push(`memory limit (${policy.limits.memoryMb} MB): no writable memory cgroup`)
  if (!report.cgroups.pids?.canCreate) warnings.push('pids cgroup (RLIMIT_NPROC still applies)')
  return { missing, warnings, landlockAbi: report.landlockAbi }
}

// Spawns `command args` confined by `policy`: bubblewrap (namespaces, capabilities,
// mount view) -> vis-launcher (noexec remount, caps dropped, rlimits, no_new_privs,
// Landlock) -> command. The caller (the worker) installs seccomp in-process with
// installSeccomp(seccompOptionsFor(policy)) before running guest code. Throws a
// VisError naming what is missing unless the opt-out is set.
export async function spawnConfined(
  policyInput: ConfinementPolicyInput,
  command: string,
  args: string[],
  options: SpawnConfinedOptions = {},
): Promise<ConfinedProcess> {
  const policy = ConfinementPolicySchema.parse(policyInput)
  const context = { sessionId: options.sessionId, op: 'spawn' }
  if (!isAbsolute(command)) {
    throw new VisError(
      'confine.command',
      `the sandboxed command must be an absolute path, got ${command}`,
      context,
    )
  }
  // A mount's folder is checked from its fd below (openMounts), never by its path.
  const absent = missingPaths([command, ...policy.readOnly, ...policy.writable])
  if (absent.length > 0) {
    throw new VisError(
      'confine.path-missing',
      `cannot confine: these paths do not exist: ${absent.join(', ')}`,
      {
        ...context,
        path: absent[0],
      },
    )
  }

  // Each root as an fd, checked: the jail mounts these, never the paths again.
  const opened = openRoots(policy.roots, { within: policy.within, pins: policy.pins }, context)
  const pins: OpenedRoot[] = []
  // Every vis process learns of this jail before it reads its masks (home-guard.ts): a vis home
  // opened inside one of its roots from then on is refused unless the jail masks it.
  const live = liveJailEntry(opened.roots)
  try {
    // So is each read-only mount's folder (a skill's), checked against its pin.
    const folders = openMounts(policy.mounts, context)
    try {
      const confined = await spawnOpened(
        policy,
        opened.roots,
        pins,
        folders.fds,
        command,
        args,
        options,
        live,
      )
      void confined.exited.then(() => live.remove())
      return confined
    } finally {
      folders.close()
    }
  } catch (err) {
    live.remove()
    throw err
  } finally {
    // The child holds its own copies by now.
    opened.close()
    for (const p of pins) closeSync(p.fd)
  }
}

async function spawnOpened(
  policy: ConfinementPolicy,
  roots: OpenedRoot[],
  pins: OpenedRoot[],
  folders: ReadonlyMap<string, number>,
  command: string,
  args: string[],
  options: SpawnConfinedOptions,
  live: LiveJailEntry,
): Promise<ConfinedProcess> {
  const context = { sessionId: options.sessionId, op: 'spawn' }
  const allowUnconfined = options.allowUnconfined ?? process.env.VIS_ALLOW_UNCONFINED === '1'
  const { missing, warnings, landlockAbi } = missingLayers(policy)
  if (missing.length > 0 && !allowUnconfined) {
    throw new VisError(
      'confine.unavailable',
      `refusing to start a sandbox: missing ${missing.join('; ')}. Install what is missing or set VIS_ALLOW_UNCONFINED=1 to run without it`,
      { ...context, missing },
    )
  }
  const unenforced = [...missing, ...warnings]
  if (missing.length > 0) {
    process.stderr.write(
      `vis: WARNING: sandbox started WITHOUT: ${missing.join('; ')} (VIS_ALLOW_UNCONFINED=1)\n`,
    )
  }

  const report = probe()
  const launcher = launcherPath()
  const useNamespaces = report.bubblewrap !== null && missing.every((m) => !m.includes('namespace'))
  const shared = options.joinNetwork
  if (shared && (!useNamespaces || !existsSync(NSENTER))) {
    throw new VisError(
      'confine.unavailable',
      existsSync(NSENTER)
        ? 'cannot share a network namespace without bubblewrap namespaces'
        : `cannot share a network namespace: ${NSENTER} is missing (apt-get install util-linux)`,
      context,
    )
  }
  if (policy.overlay && !(launcher && useNamespaces)) {
    throw new VisError(
      'draft.unconfined',
      'a draft needs the jail (bubblewrap namespaces and vis-launcher) to show its overlay; it cannot run unconfined',
      { ...context, path: policy.overlay.root },
    )
  }
  // A draft: the jail starts inside the draft's mount namespace (draft-mount.ts).
  const draft = policy.overlay ? await draftMount(policy.overlay) : undefined
  const egress =
    policy.network.enabled && useNamespaces && !shared ? await startEgressProxy(policy.network) : undefined

  // Everything past the caller's stdio is closed by vis-launcher: fds the host
  // inherited without O_CLOEXEC must not reach the guest.
  const keepFds = Array.isArray(options.stdio) ? Math.max(3, options.stdio.length) : 3
  // The mount view: the roots, then the host's own writable directories; vis homes inside a
  // root masked like extension directories.
  const { readOnly, links } = resolvedReadOnly(policy.readOnly, policy.roots)
  live.announce()
  const homes = maskedHomes(roots)
  const masked = homes.map((h) => h.real)
  const view: ConfinementPolicy = {
    ...policy,
    readOnly,
    roots: [...policy.roots, ...policy.writable],
    // A mask's mount point is made in its root when missing: a read-only root cannot take one,
    // and a directory absent from it has nothing to hide and cannot be made there.
    hidden: [
      ...new Set([...policy.hidden, ...homes.map((h) => h.mask), ...projectExtensionMasks(roots)]),
    ].filter((h) => existsSync(h) || !policy.readOnlyRoots.some((r) => h.startsWith(`${r}/`))),
  }
  live.settle(masked)
  const pkg = useNamespaces ? packageMounts(roots) : []
  if (useNamespaces) pinFds(view, roots, pins, context, pkg)
  const bound = useNamespaces ? [...roots.filter((r) => r.path !== policy.overlay?.root), ...pins] : []
  const firstRootFd = keepFds + (shared ? 2 : 0) + (draft ? 2 : 0)
  const mountFds: Record<string, number> = {}
  bound.forEach((r, i) => {
    mountFds[r.path] = firstRootFd + i
  })
  // The mounts' folders follow the roots' fds, by target.
  const shownFolders = useNamespaces ? [...folders] : []
  const folderFds: Record<string, number> = {}
  shownFolders.forEach(([target], i) => {
    folderFds[target] = firstRootFd + bound.length + i
  })
  const input = {
    policy: view,
    mountFds,
    folderFds,
    links,
    packageMounts: pkg,
    // Bound where they really are (resolvedReadOnly); argv keeps the paths as given.
    command: realish(command),
    launcher: launcher ? realish(launcher) : '',
    landlockAbi,
    egressDir: egress?.dir,
    cwd: options.cwd,
    keepFds,
    pty: options.pty,
    soleProcess: options.soleProcess,
    sharedNetwork: shared !== undefined,
    hostsFile: shared ? loopbackHosts() : undefined,
  }
  let argv: string[]
  if (launcher && useNamespaces && report.bubblewrap) {
    argv = [
      report.bubblewrap.path,
      ...bubblewrapArgs(input),
      '--',
      launcher,
      ...launcherArgs(input, { inNamespace: true }),
      '--',
      command,
      ...args,
    ]
    // nsenter enters the holder's user namespace (its owner, the host user, has every
    // capability there) and then its network namespace, and execs bubblewrap, which
    // nests its own user namespace: the sandbox gets no capability over the holder.
    // The namespaces come as inherited fds, so a recycled pid can never name others.
    const network = shared ? nsenter({ user: keepFds, net: keepFds + 1 }) : []
    // A draft's namespaces come first (its user namespace owns its mount namespace); a
    // shared network's from inside them (that holder was started in them too).
    const base = keepFds + (shared ? 2 : 0)
    const mount = draft ? nsenter({ user: base, mount: base + 1 }) : []
    argv = [...mount, ...network, ...argv]
  } else if (launcher) {
    argv = [launcher, ...launcherArgs(input, { inNamespace: false }), '--', command, ...args]
  } else {
    argv = [command, ...args]
  }

  // Join the cgroups from a shell that then execs the sandbox, so no process of
  // the sandbox ever runs outside them.
  const cgroup: SandboxCgroup = createSandboxCgroup(
    detectCgroups(),
    `vis-${process.pid}-${randomBytes(4).toString('hex')}`,
    policy.limits,
  )
  if (cgroup.procsFiles.length > 0) {
    const join = 'for f; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; shift; done; shift; exec "$@"'
    argv = ['/bin/sh', '-c', join, 'vis-cgroup-join', ...cgroup.procsFiles, '--', ...argv]
  }

  const env = sandboxEnvironment(policy, options.env)
  let stdio: StdioOptions = options.stdio ?? ['ignore', 'inherit', 'inherit']
  if (shared || draft || bound.length > 0 || shownFolders.length > 0) {
    const base = Array.isArray(stdio) ? [...stdio] : [stdio, stdio, stdio]
    while (base.length < keepFds) base.push('ignore')
    // vis-launcher closes them (fds >= keepFds) before the command runs.
    stdio = [
      ...base,
      ...(shared ? [shared.user, shared.net] : []),
      ...(draft ? [draft.user, draft.mnt] : []),
      ...bound.map((r) => r.fd),
      ...shownFolders.map(([, fd]) => fd),
    ]
  }
  await rootsChecked(roots)
  const [file, ...rest] = argv as [string, ...string[]]
  const child = spawn(file, rest, {
    env,
    stdio,
    cwd: useNamespaces ? '/' : (options.cwd ?? policy.roots[0] ?? '/'),
    detached: false,
  })
  if (child.pid !== undefined) live.settle(masked, child.pid)

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
    child.once('error', () => resolve({ code: null, signal: null }))
  })
  void exited.then(async () => {
    for (const pid of cgroup.pidsInGroup()) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    await egress?.close()
    // the group empties a moment after its last process is reaped
    for (let i = 0; i < 20 && cgroup.dirs.length > 0; i++) {
      cgroup.dispose()
      await new Promise((r) => setTimeout(r, 25))
    }
  })

  return {
    child,
    policy,
    egress,
    exited,
    outOfMemory: () => cgroup.oomKills() > 0,
    layers: {
      namespaces: useNamespaces,
      landlock: launcher && landlockAbi >= 1 ? landlockAbi : 0,
      rlimits: launcher !== undefined,
      memoryCgroup: cgroup.memory,
      pidsCgroup: cgroup.pids,
      seccomp: 'worker',
      unenforced,
    },
    kill() {
      try {
        child.kill('SIGKILL')
      } catch {}
      for (const pid of cgroup.pidsInGroup()) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {}
      }
    },
  }
}

const NSENTER = '/usr/bin/nsenter'

// nsenter into the namespaces named by inherited fds, keeping the caller's credentials.
const nsenter = (ns: Record<string, number>): string[] => [
  NSENTER,
  ...Object.entries(ns).map(([kind, fd]) => `--${kind}=/proc/self/fd/${fd}`),
  '--preserve-credentials',
  '--',
]

// The /etc/hosts of a jail on a shared tool network: `localhost` is its loopback. One
// read-only file per host process.
let hostsFile: string | undefined
function loopbackHosts(): string {
  if (hostsFile && existsSync(hostsFile)) return hostsFile
  const file = join(makeHostStateDir('vis-hosts-'), 'hosts')
  writeFileSync(file, '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n')
  chmodSync(file, 0o444)
  hostsFile = file
  return file
}

// What the worker passes to installSeccomp on `confine`.
export function seccompOptionsFor(policy: ConfinementPolicy): { processes: boolean; network: boolean } {
  return { processes: policy.shell, network: policy.network.enabled }
}
