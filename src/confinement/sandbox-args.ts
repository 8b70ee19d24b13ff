import { existsSync } from 'node:fs'
import { hostTarget } from '../distribution/platform.js'
import { EGRESS_DIR, EGRESS_PORT } from './environment.js'
import type { ConfinementPolicy } from './jail-policy.js'

// What a jailed node + CPython need to read besides the distribution and the
// package (runtime-notes section 6). Optional entries are skipped when absent. The loader and
// library directories are the platform's (platform.ts, jailLibs).
const systemReadOnly = (): string[] => [...hostTarget().jailLibs, '/etc/ld.so.cache', '/etc/localtime']
const SYSTEM_OPTIONAL = ['/etc/ssl/openssl.cnf']
const SHELL_READ_ONLY = ['/usr/bin', '/usr/local/bin', '/usr/share/zoneinfo']
const NETWORK_READ_ONLY = ['/etc/ssl/certs', '/usr/share/ca-certificates']
// Everyday devices (issue 13): code writes to /dev/null (subprocess.DEVNULL-style, logging),
// reads /dev/zero and the random devices, and tests write to /dev/full to see ENOSPC.
const DEVICES_READ_WRITE = ['/dev/null', '/dev/zero', '/dev/full']
const DEVICES_READ_ONLY = ['/dev/urandom', '/dev/random']

const HOSTS = '/etc/hosts'

export const SANDBOX_UID = 65534
export const TMP_DEFAULT_MB = 64

export type SandboxArgsInput = {
  policy: ConfinementPolicy
  command: string
  launcher: string
  landlockAbi: number // < 1: run the launcher with --no-landlock (opt-out only)
  egressDir?: string // host directory holding the proxy's socket
  cwd?: string
  keepFds?: number // fds 0..keepFds-1 reach the command (the worker's socketpair is fd 3)
  pty?: boolean // a private devpts instance, for tools that allocate pseudo-terminals
  // No reaper: the command is the pid namespace's init (~1.3 MB less per sandbox). Only
  // where nothing can start a process: seccomp refuses one unless the policy has a shell.
  soleProcess?: boolean
  // The sandbox joins its session's tool network namespace (loopback, plus the egress
  // relay when the network is on) instead of making its own; TCP on ports >= 1024 is open
  // inside it, so tool processes reach each other's servers.
  sharedNetwork?: boolean
  // With sharedNetwork: a file shown read-only at /etc/hosts so `localhost` resolves.
  hostsFile?: string
  // The vis-runtime package where a root contains it (mount-sources.ts packageMounts): bound
  // read-only on top of that root, with the directories between pinned like a mask's.
  packageMounts?: string[]
  // Mount points bound from an fd the sandbox inherits (by where the sandbox sees them): the
  // roots and their pins, opened and checked by root-guard.ts, so a path swapped after the
  // check cannot change what is mounted.
  mountFds?: Record<string, number>
  // The read-only mounts' folders (policy.mounts, by target), opened and checked against their
  // pins by mount-pins.ts: bound from these fds, never by path.
  folderFds?: Record<string, number>
  // Symlinks to make outside the roots: a read-only path the host reaches through a symlink,
  // mounted at its real place (spawn.ts), still resolves at the path the command names.
  links?: { path: string; target: string }[]
}

// The lowest port a tool jail sharing its session's network namespace may bind or connect
// to: unprivileged ports, where the session's own servers listen (and the egress relay).
export const SHARED_NETWORK_MIN_PORT = 1024

const depth = (p: string) => p.split('/').filter(Boolean).length
const inside = (p: string, dir: string) => p === dir || p.startsWith(dir === '/' ? '/' : `${dir}/`)

// A hidden directory is masked by an empty read-only tmpfs, and every directory between its
// root and it is bound onto itself. A mount point cannot be renamed or removed, so the sandbox
// cannot move the mask aside (rename <root>/.vis) and plant a fresh directory at the path the
// host reads extensions from. Hidden paths outside every root are unreachable already.
// The package inside a root (packageMounts) is pinned the same way: renaming a directory above
// it would let a fresh package be planted at the path the next host process runs from.
export function hiddenMounts(
  policy: Pick<ConfinementPolicy, 'roots' | 'hidden'>,
  packageMounts: string[] = [],
): {
  pins: string[]
  masks: string[]
} {
  const pins = new Set<string>()
  const masks: string[] = []
  const hidden = policy.hidden.map((h) => ({ h, mask: true }))
  for (const { h, mask } of [...hidden, ...packageMounts.map((h) => ({ h, mask: false }))]) {
    const root = policy.roots.filter((r) => inside(h, r) && r !== h).sort((a, b) => depth(b) - depth(a))[0]
    if (root === undefined) continue
    if (mask) masks.push(h)
    const parts = h.slice(root.length).split('/').filter(Boolean)
    let d = root
    for (const part of parts.slice(0, -1)) {
      d = d === '/' ? `/${part}` : `${d}/${part}`
      pins.add(d)
    }
  }
  return { pins: [...pins], masks }
}

// bubblewrap: namespaces, capabilities and the mount view. Only CAP_SYS_ADMIN and
// CAP_SETPCAP survive into the sandbox's own user namespace, for vis-launcher to
// remount the roots noexec and then drop every capability.
export function bubblewrapArgs(input: SandboxArgsInput): string[] {
  const { policy, command, launcher } = input
  // With --dev (pty) bubblewrap maps uid 0 first to mount devpts, and any other sandbox
  // uid makes it nest a second user namespace that does not own the mount namespace, so
  // vis-launcher could not remount the roots noexec. The uid inside is only a name: the
  // kernel's uid is the host user's either way, and vis-launcher still drops every
  // capability (bounding set included) before anything runs.
  const uid = input.pty ? '0' : String(SANDBOX_UID)
  const args = [
    '--unshare-user',
    '--unshare-pid',
    ...(input.sharedNetwork ? [] : ['--unshare-net']),
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--uid',
    uid,
    '--gid',
    uid,
    '--hostname',
    'vis',
    '--cap-drop',
    'ALL',
    '--cap-add',
    'CAP_SYS_ADMIN',
    '--cap-add',
    'CAP_SETPCAP',
    '--new-session',
    '--die-with-parent',
    ...(input.soleProcess && !policy.shell && !input.pty ? ['--as-pid-1'] : []),
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
  ]
  if (policy.shell) args.push('--symlink', 'usr/bin', '/bin', '--symlink', 'usr/sbin', '/sbin')

  // /tmp first: a root or a read-only path below /tmp must land on top of the tmpfs
  const tmpMb = policy.limits.diskMb ?? TMP_DEFAULT_MB
  args.push('--size', String(tmpMb * 1024 * 1024), '--tmpfs', '/tmp')

  // `dest`: where the sandbox sees it, when not at its own path (policy.mounts).
  const binds: { src: string; dest?: string; kind: 'ro' | 'rw' | 'ro-try' | 'mask'; fd?: number }[] = []
  for (const p of systemReadOnly()) binds.push({ src: p, kind: 'ro-try' })
  for (const p of SYSTEM_OPTIONAL) binds.push({ src: p, kind: 'ro-try' })
  if (policy.shell) for (const p of SHELL_READ_ONLY) binds.push({ src: p, kind: 'ro-try' })
  if (policy.network.enabled) for (const p of NETWORK_READ_ONLY) binds.push({ src: p, kind: 'ro-try' })
  for (const p of policy.readOnly) binds.push({ src: p, kind: 'ro' })
  for (const m of policy.mounts)
    binds.push({ src: m.source, dest: m.target, kind: 'ro', fd: input.folderFds?.[m.target] })
  binds.push({ src: command, kind: 'ro' }, { src: launcher, kind: 'ro' })
  const readOnlyRoot = (p: string) => policy.readOnlyRoots.some((r) => inside(p, r))
  for (const p of policy.roots)
    binds.push({ src: p, kind: policy.readOnlyRoots.includes(p) ? 'ro' : 'rw', fd: input.mountFds?.[p] })
  const pkg = input.packageMounts ?? []
  for (const p of pkg) binds.push({ src: p, kind: 'ro' })
  const hidden = hiddenMounts(policy, pkg)
  // A pin inside the package (a mask below it) stays read-only like the package around it.
  for (const p of hidden.pins)
    binds.push({
      src: p,
      kind: pkg.some((k) => inside(p, k)) || readOnlyRoot(p) ? 'ro' : 'rw',
      fd: input.mountFds?.[p],
    })
  for (const p of hidden.masks) binds.push({ src: p, kind: 'mask' })
  // parents before children, so a root inside a read-only tree stays writable and a mask
  // lands on top of the root that contains it; at the same path the read-only bind goes last
  // (a root that is the package itself stays read-only there)
  const rank = { rw: 0, ro: 1, 'ro-try': 1, mask: 2 }
  binds.sort((a, b) => depth(a.dest ?? a.src) - depth(b.dest ?? b.src) || rank[a.kind] - rank[b.kind])
  // A mask turns read-only once everything below it is mounted: a host directory bound inside
  // it (a worker's outbox in a masked vis home) needs its mount point made first.
  const readOnlyMasks: string[] = []
  for (const b of binds) {
    if (b.kind === 'mask') {
      args.push('--tmpfs', b.src)
      readOnlyMasks.push('--remount-ro', b.src)
      continue
    }
    const flag = b.kind === 'rw' ? '--bind' : b.kind === 'ro' ? '--ro-bind' : '--ro-bind-try'
    args.push(flag, b.fd === undefined ? b.src : `/proc/self/fd/${b.fd}`, b.dest ?? b.src)
  }
  args.push(...readOnlyMasks)
  for (const l of input.links ?? []) args.push('--symlink', l.target, l.path)

  if (input.pty) {
    // bubblewrap's minimal /dev with a NEW devpts instance: the sandbox sees only the
    // pseudo-terminals it made itself, never the host's. It also provides /dev/fd.
    args.push('--proc', '/proc', '--dev', '/dev')
  } else {
    args.push('--proc', '/proc', '--tmpfs', '/dev')
    for (const d of [...DEVICES_READ_WRITE, ...DEVICES_READ_ONLY]) args.push('--dev-bind', d, d)
    args.push('--symlink', '/proc/self/fd', '/dev/fd')
  }
  if (input.egressDir) args.push('--ro-bind', input.egressDir, EGRESS_DIR)
  if (input.sharedNetwork && input.hostsFile) args.push('--ro-bind', input.hostsFile, HOSTS)
  args.push('--chdir', input.cwd ?? policy.roots[0] ?? '/tmp')
  return args
}

// vis-launcher: noexec remount, capability drop, rlimits, no_new_privs, Landlock.
export function launcherArgs(input: SandboxArgsInput, options: { inNamespace: boolean }): string[] {
  const { policy, command } = input
  const args: string[] = []
  // The pins under a hidden directory are mounts of their own: noexec like their root.
  const pins = hiddenMounts(policy, input.packageMounts).pins
  if (options.inNamespace) for (const r of [...policy.roots, ...pins, '/tmp']) args.push('--noexec', r)
  const ro = [
    ...systemReadOnly(),
    ...SYSTEM_OPTIONAL,
    ...policy.readOnly,
    ...(input.packageMounts ?? []),
    command,
    '/proc',
    ...DEVICES_READ_ONLY,
  ]
  if (policy.shell) ro.push(...SHELL_READ_ONLY)
  if (policy.network.enabled) ro.push(...NETWORK_READ_ONLY)
  // A mount's target exists only inside the namespace.
  if (options.inNamespace) ro.push(...policy.mounts.map((m) => m.target))
  if (input.sharedNetwork && input.hostsFile && options.inNamespace) ro.push(HOSTS)
  for (const p of ro) args.push('--ro', p)
  for (const r of policy.roots) args.push(policy.readOnlyRoots.includes(r) ? '--rd' : '--rw', r)
  if (options.inNamespace) args.push('--rw', '/tmp')
  for (const d of DEVICES_READ_WRITE) args.push('--dev', d)
  if (input.pty) args.push('--dev', '/dev/pts')
  if (input.sharedNetwork) args.push('--tcp-from', String(SHARED_NETWORK_MIN_PORT))
  else if (policy.network.enabled)
    args.push('--connect-tcp', String(EGRESS_PORT), '--bind-tcp', String(EGRESS_PORT))
  const { limits } = policy
  args.push('--nofile', String(limits.openFiles), '--nproc', String(limits.processes))
  if (limits.diskMb !== undefined) args.push('--fsize', String(limits.diskMb * 1024 * 1024))
  args.push('--keep-fds', String(input.keepFds ?? 3))
  if (input.landlockAbi < 1) args.push('--no-landlock')
  else args.push('--min-abi', String(policy.network.enabled ? 4 : 1))
  return args
}

// A bind source must exist; a command given by name would not be in the mount view.
export function missingPaths(paths: string[]): string[] {
  return paths.filter((p) => !existsSync(p))
}
