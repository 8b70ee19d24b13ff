import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { EgressProxy } from '../confinement/egress/proxy.js'
import { type LayerStatus, spawnConfined } from '../confinement/spawn.js'
import { localBuildDir, prebuildsRoot } from '../native/locate.js'
import { VisError } from '../util/errors.js'
import { packageRoot } from '../util/home.js'
import { workerPackageDirs } from './package-deps.js'
import type { WorkerPolicy } from './policy.js'

export type SpawnRequest = {
  policy: WorkerPolicy
  command: string
  args: string[]
  env: Record<string, string>
  // fd the child's stdout and stderr are written to (the worker's log file).
  logFd: number
  // Directories the worker must read besides the package (the Python distribution).
  readOnly?: string[]
  // Directories the worker may write besides the policy's roots (its outbox).
  writable?: string[]
  // false: a plain process with no OS jail (only for peers that run no guest code).
  confine?: boolean
  sessionId?: string
  // Unconfined only: the user and mount namespaces (open fds) to start in.
  enter?: EnterNamespaces
}

export type EnterNamespaces = { user: number; mnt: number }

export type SpawnedProcess = {
  child: ChildProcess
  // Kills the whole process tree.
  kill(): void
  // The jail's layers, when confined.
  layers?: LayerStatus
  // Whether the sandbox's memory limit killed something (read it when the child exits).
  outOfMemory?: () => boolean
  // The host's egress proxy of this worker (network on): tightened with the session.
  egress?: EgressProxy
}

// The one place a worker process is created. fd 3 is a 'pipe', which libuv creates as a
// unix socketpair: the child inherits its end and nothing else can open it. Confined,
// the worker runs under bubblewrap + vis-launcher (namespaces, Landlock, rlimits,
// cgroups) with the package and the distribution read-only and the roots read-write.
export async function spawnWorkerProcess(req: SpawnRequest): Promise<SpawnedProcess> {
  const stdio: ['ignore', number, number, 'pipe'] = ['ignore', req.logFd, req.logFd, 'pipe']
  if (req.confine === false) {
    if (req.policy.overlay) {
      throw new VisError(
        'draft.unconfined',
        'a draft needs the jail to show its overlay; this runtime runs unconfined',
        {
          sessionId: req.sessionId,
          op: 'spawn',
          path: req.policy.overlay.root,
        },
      )
    }
    const { command, args, fds } = req.enter
      ? enterNamespaces(req.enter, req.command, req.args)
      : { command: req.command, args: req.args, fds: [] }
    // Its own process group, so the tree can be killed at once.
    const child = spawn(command, args, {
      cwd: packageRoot,
      env: req.env,
      stdio: [...stdio, ...fds],
      detached: true,
    })
    return {
      child,
      kill() {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
        } catch {
          child.kill('SIGKILL')
        }
      },
    }
  }
  // The native parts are bound again on their own: a root that is the package itself (vis run
  // in its checkout) is mounted noexec over the package's read-only bind, and the worker could
  // not map its addons ("failed to map segment"). Their own mounts nest under the root, stay
  // executable, and are read-only to the sandbox.
  const native = [localBuildDir(), prebuildsRoot(), process.env.VIS_ADDON_DIR].filter(
    (d): d is string => d !== undefined && d !== '' && existsSync(d),
  )
  const readOnly = [...new Set([packageRoot, ...native, ...workerPackageDirs(), ...(req.readOnly ?? [])])]
  const confined = await spawnConfined(
    {
      // The workspace root stays first: it is the sandbox's home and working directory.
      roots: req.policy.roots,
      ...(req.policy.within ? { within: req.policy.within } : {}),
      ...(req.policy.pins ? { pins: req.policy.pins } : {}),
      writable: req.writable ?? [],
      readOnly,
      network: req.policy.network,
      shell: req.policy.shell,
      limits: req.policy.limits,
      hidden: req.policy.hidden,
      overlay: req.policy.overlay,
      mounts: req.policy.mounts ?? [],
    },
    req.command,
    req.args,
    { env: req.env, stdio, sessionId: req.sessionId, soleProcess: true },
  )
  return {
    child: confined.child,
    kill: () => confined.kill(),
    layers: confined.layers,
    outOfMemory: () => confined.outOfMemory(),
    egress: confined.egress,
  }
}

const NSENTER = '/usr/bin/nsenter'

// nsenter into a draft's namespaces (passed as fds 4 and 5), then exec the command. Root
// joins only the mount namespace: in the draft's user namespace it would lose its power
// over files of users not mapped there. Anyone else joins the user namespace too (it owns
// the mount namespace), keeping their uid. The working directory is the package's, as
// without a namespace (setns would leave it at the namespace's /).
function enterNamespaces(
  ns: EnterNamespaces,
  command: string,
  args: string[],
): { command: string; args: string[]; fds: number[] } {
  const asRoot = process.getuid?.() === 0
  return {
    command: NSENTER,
    args: [
      ...(asRoot ? [] : ['--user=/proc/self/fd/4', '--preserve-credentials']),
      '--mount=/proc/self/fd/5',
      `--wd=${packageRoot}`,
      '--',
      command,
      ...args,
    ],
    fds: [ns.user, ns.mnt],
  }
}
