import type { ChildProcess } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readlinkSync, symlinkSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import type { Readable } from 'node:stream'
import { z } from 'zod'
import { findNative } from '../confinement/native.js'
import { type ConfinedProcess, spawnConfined } from '../confinement/spawn.js'
import type { NetworkEntry } from '../contracts/network-policy.js'
import { type JailGitConfig, jailGitConfig } from '../tools/git/jail-config.js'
import { jailInitEntry } from '../tools/proc/jail-init-entry.js'
import { processTree } from '../tools/proc/tree.js'
import type { ExitStatus, SpawnHook } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { guestDir, packageRoot } from '../util/home.js'
import { hostProgramPath, trustedSearchPath } from '../util/host-programs.js'
import { makeHostStateDir } from '../util/host-state-dirs.js'
import { jailPolicy, tightenedNetwork, type WorkerPolicy } from '../worker/worker-policy.js'

export type ToolJailOptions = {
  sessionId: string
  // The session's policy: the same roots, network, limits and masked directories as
  // its worker's jail.
  policy: WorkerPolicy
  // The distribution root: read-only inside, its bin/ first on PATH, so `python3` in
  // the shell is the session's own Python.
  pythonRoot?: string
}

// What git needs besides /usr/bin: its helper programs and the templates `git init` copies.
const GIT_READ_ONLY = ['/usr/lib/git-core', '/usr/share/git-core']

// The jail a confined session gives its tools (shell, background shells, git): every
// process runs in a jail of its own built from the session's policy by spawnConfined —
// bubblewrap namespaces (pid, mount, user), vis-launcher's Landlock and rlimits, the
// session's cgroup limits. The roots are read-write (noexec), /usr read-only, processes
// allowed (the shell is on, or git runs its own helpers). Children inherit the jail;
// killing it kills its whole pid namespace.
//
// The network namespace is the session's, not the process's: one long-lived holder
// sandbox (started on the first spawn, killed on dispose) owns a namespace with only
// loopback, plus the relay to the host's egress proxy when the network is on, and every
// tool jail joins it with TCP open on ports >= 1024. So a background server one command
// starts is reachable from the next, and from nothing outside the session.
//
// git is jailed the same way. Its global config is a file the host writes for the
// session with only the user's identity (jail-config.ts), never the user's ~/.gitconfig,
// which can hold credentials. What a repository's own config makes git run (filters,
// drivers) stays inside this jail.
export type ToolJail = {
  spawn: SpawnHook
  // The session's network was tightened: the holder's egress proxy and later jails follow.
  setNetwork(net: { enabled: boolean; allow: NetworkEntry[] }): void
  dispose(): Promise<void>
}

export function toolJail(input: ToolJailOptions): ToolJail {
  // A copy: setNetwork narrows it for the rest of the session.
  const o: ToolJailOptions = { ...input, policy: { ...input.policy, network: { ...input.policy.network } } }
  const { policy } = o
  const holder = new NetworkHolder(o)
  // Written on the first spawn: a session that never starts a tool process costs no file.
  let gitConfig: JailGitConfig | undefined
  const spawn: SpawnHook = async (command, args, opts) => {
    const exe = resolveOnHost(command, o.sessionId)
    const readOnly = [...GIT_READ_ONLY.filter((p) => existsSync(p)), ...(opts.readOnly ?? [])]
    const env: Record<string, string> = { ...opts.env }
    if (o.pythonRoot) {
      readOnly.push(o.pythonRoot)
      env.PATH = `${join(o.pythonRoot, 'bin')}:/usr/local/bin:/usr/bin:/bin`
    }
    gitConfig ??= jailGitConfig()
    readOnly.push(gitConfig.file)
    env.GIT_CONFIG_GLOBAL = gitConfig.file
    const init = await jailInitFiles(o.sessionId)
    readOnly.push(...init.readOnly)
    Object.assign(env, init.env)
    // jail-init reports how the command ended on fd 3 (see jail-init.ts).
    env.VIS_JAIL_STATUS_FD = String(STATUS_FD)
    env.VIS_JAIL_SHARED_NET = '1'
    // `localhost` is the session's own servers; other names (127.0.0.1 included) still
    // go through the egress proxy, which decides.
    if (policy.network.enabled) {
      env.NO_PROXY = env.no_proxy = 'localhost'
      // A python3 the command runs routes raw sockets and lookups through the proxy too.
      const site = toolPythonSite()
      readOnly.push(site, guestDir)
      env.PYTHONUSERBASE = site
      env.VIS_EGRESS_LOCAL = '1'
    }
    const joinNetwork = await holder.namespaces()
    const jail = await spawnConfined(
      jailPolicy(policy, { readOnly, shell: true }),
      process.execPath,
      [init.script, exe, ...args],
      {
        env,
        stdio: [opts.stdin, 'pipe', 'pipe', 'pipe'],
        cwd: opts.cwd,
        sessionId: o.sessionId,
        pty: opts.pty,
        joinNetwork,
      },
    )
    return { child: jail.child, jailed: true, kill: () => jail.kill(), status: readStatus(jail.child) }
  }
  const setNetwork = (net: { enabled: boolean; allow: NetworkEntry[] }) => {
    policy.network = tightenedNetwork(policy.network, net)
    holder.setRules(policy.network)
  }
  const dispose = async () => {
    await holder.dispose()
    gitConfig?.dispose()
  }
  return { spawn, setNetwork, dispose }
}

// Every tool jail starts under jail-init: seccomp, and (for the holder) the egress relay.
// It needs node, its own script and vis_confine.node.
async function jailInitFiles(
  sessionId: string,
): Promise<{ script: string; readOnly: string[]; env: Record<string, string> }> {
  const script = await jailInitEntry()
  const addon = findNative('vis_confine.node')
  if (!addon) {
    throw new VisError('confine.addon-missing', 'vis_confine.node is not built: run `npm run build:addon`', {
      sessionId,
      op: 'spawn',
    })
  }
  return {
    script,
    readOnly: [script.endsWith('.mjs') ? script : join(packageRoot, 'dist'), addon],
    // The exact file: a prebuild's name (node.napi.glibc.node) is not vis_confine.node.
    env: { VIS_CONFINE_ADDON: addon },
  }
}

const HOLDER_READY_MS = 30_000

type Holder = { jail: ConfinedProcess; ns: { user: number; net: number } }

// The sandbox that owns a session's tool network namespace. It runs jail-init (the egress
// relay when the network is on) over a shell that says it is ready and sleeps. Its user
// and network namespaces are held open as fds from the moment it is ready, so a spawn
// names exactly them, never whatever a recycled pid would lead to.
class NetworkHolder {
  private current: Promise<Holder> | undefined
  private disposed = false

  constructor(private readonly o: ToolJailOptions) {}

  async namespaces(): Promise<{ user: number; net: number }> {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (this.disposed) break
      if (!this.current) this.current = this.start()
      const p = this.current
      let h: Holder
      try {
        h = await p
      } catch (err) {
        if (this.current === p) this.current = undefined
        throw err
      }
      if (h.jail.child.exitCode === null && h.jail.child.signalCode === null) return h.ns
      // It died (killed by a limit): the next command gets a fresh namespace.
      if (this.current === p) {
        this.current = undefined
        release(h)
      }
    }
    throw new VisError('tool.spawn', `session ${this.o.sessionId} is disposed: no tool process may start`, {
      sessionId: this.o.sessionId,
      op: 'spawn',
    })
  }

  setRules(net: WorkerPolicy['network']): void {
    void this.current?.then((h) => h.jail.egress?.setRules(net)).catch(() => undefined)
  }

  async dispose(): Promise<void> {
    this.disposed = true
    const p = this.current
    this.current = undefined
    const h = await p?.catch(() => undefined)
    if (h) {
      h.jail.kill()
      release(h)
      await h.jail.exited
    }
  }

  private async start(): Promise<Holder> {
    const { policy, sessionId } = this.o
    const init = await jailInitFiles(sessionId)
    // In a draft the holder lives in the draft's user namespace (the policy's overlay), so
    // tool jails can enter both its network namespace and the draft's mount namespace.
    const jail = await spawnConfined(
      jailPolicy(policy, { readOnly: init.readOnly, shell: true }),
      process.execPath,
      [init.script, '/bin/sh', '-c', 'echo ready && exec sleep infinity'],
      { env: init.env, stdio: ['ignore', 'pipe', 'pipe'], sessionId },
    )
    try {
      await ready(jail)
      const pid = insideNamespace(jail.child.pid)
      if (pid === undefined) throw new Error('no process of it is in its own network namespace')
      const ns = { user: openNamespace(pid, 'user'), net: openNamespace(pid, 'net') }
      if (this.disposed) {
        jail.kill()
        release({ jail, ns })
        throw new Error('the session was disposed')
      }
      return { jail, ns }
    } catch (err) {
      jail.kill()
      throw new VisError(
        'tool.spawn',
        `could not start the session's tool network: ${(err as Error).message}`,
        { sessionId, op: 'spawn' },
      )
    }
  }
}

function ready(jail: ConfinedProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    const timer = setTimeout(() => reject(new Error('it did not start in time')), HOLDER_READY_MS)
    jail.child.stderr?.on('data', (d: Buffer) => {
      if (err.length < 2000) err += d.toString()
    })
    jail.child.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
      if (out.includes('ready\n')) {
        clearTimeout(timer)
        resolve()
      }
    })
    jail.child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`it exited (${code}): ${err.trim().slice(-500)}`))
    })
  })
}

const hostNet = () => readlinkSync('/proc/self/ns/net')

function insideNamespace(root: number | undefined): number | undefined {
  if (root === undefined) return undefined
  const own = hostNet()
  return processTree(root).find((pid) => {
    try {
      return readlinkSync(`/proc/${pid}/ns/net`) !== own
    } catch {
      return false
    }
  })
}

function openNamespace(pid: number, kind: 'user' | 'net'): number {
  const fd = openSync(`/proc/${pid}/ns/${kind}`, 'r')
  if (kind === 'net' && readlinkSync(`/proc/self/fd/${fd}`) === hostNet()) {
    closeSync(fd)
    throw new Error("its network namespace is the host's")
  }
  return fd
}

function release(h: Holder): void {
  for (const fd of [h.ns.user, h.ns.net]) {
    try {
      closeSync(fd)
    } catch {}
  }
}

const STATUS_FD = 3

// PYTHONUSERBASE of tool jails: lib/python3.X/site-packages/usercustomize.py links to
// vis_guest/toolsite.py for every minor a distribution may have. One per host process.
let pythonSite: string | undefined
function toolPythonSite(): string {
  if (pythonSite && existsSync(pythonSite)) return pythonSite
  const dir = makeHostStateDir('vis-toolsite-')
  for (const minor of ['3.10', '3.11', '3.12', '3.13', '3.14']) {
    const site = join(dir, 'lib', `python${minor}`, 'site-packages')
    mkdirSync(site, { recursive: true })
    symlinkSync(join(guestDir, 'vis_guest', 'toolsite.py'), join(site, 'usercustomize.py'))
  }
  pythonSite = dir
  return dir
}

const StatusLine = z.union([
  z.object({ exit: z.number().int() }).strict(),
  z.object({ signal: z.string().regex(/^SIG[A-Z0-9]+$/) }).strict(),
])

// jail-init's one line on the status pipe. Only the jail's own layers hold the pipe (the
// command gets /dev/null as fd 3), so EOF comes when the jail is gone. Nothing (it was
// killed first) or anything else: undefined.
function readStatus(child: ChildProcess): Promise<ExitStatus | undefined> {
  const pipe = child.stdio[STATUS_FD] as Readable | null | undefined
  if (!pipe) return Promise.resolve(undefined)
  return new Promise((resolve) => {
    let text = ''
    pipe.setEncoding('utf8')
    pipe.on('data', (d: string) => {
      if (text.length < 256) text += d
    })
    pipe.on('error', () => resolve(undefined))
    pipe.on('close', () => {
      let parsed: z.infer<typeof StatusLine> | undefined
      try {
        parsed = StatusLine.parse(JSON.parse(text))
      } catch {
        resolve(undefined)
        return
      }
      resolve(
        'signal' in parsed ? { exit: null, signal: parsed.signal } : { exit: parsed.exit, signal: null },
      )
    })
  })
}

// The jail binds the program read-only at its own path, so it must be absolute; it is
// looked up in the trusted system directories (util/host-programs.ts), never on the host's PATH.
function resolveOnHost(command: string, sessionId: string): string {
  if (isAbsolute(command)) return command
  const found = hostProgramPath(command)
  if (found) return found
  throw new VisError(
    'tool.spawn',
    `${command} is not installed in the system directories (${trustedSearchPath().join(':')}); install it there, or name its directories in VIS_HOST_PATH`,
    { sessionId, op: 'spawn' },
  )
}
