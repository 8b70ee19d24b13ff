import type { ChildProcess } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, dirname, isAbsolute, join } from 'node:path'
import type { Readable } from 'node:stream'
import { z } from 'zod'
import { findNative } from '../confinement/native.js'
import { spawnConfined } from '../confinement/spawn.js'
import { jailInitEntry } from '../tools/proc/jail-init-entry.js'
import type { ExitStatus, SpawnHook } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { packageRoot } from '../util/home.js'
import type { WorkerPolicy } from '../worker/policy.js'

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

// The spawner a confined session gives its tools (shell, background shells, git): every
// process runs in a jail of its own built from the session's policy by spawnConfined —
// bubblewrap namespaces (pid, net, mount, user), vis-launcher's Landlock and rlimits,
// the session's cgroup limits. The roots are read-write (noexec), /usr read-only, the
// network what the policy says, processes allowed (the shell is on, or git runs its own
// helpers). Children inherit the jail; killing it kills its whole pid namespace.
//
// git is jailed the same way, with the user's ~/.gitconfig read-only (identity,
// aliases): a repository's own config can make git run commands (aliases, filters,
// hooks are noexec on the roots), and they stay inside this jail.
export function jailedSpawn(o: ToolJailOptions): SpawnHook {
  const { policy } = o
  return async (command, args, opts) => {
    const exe = resolveOnHost(command, o.sessionId)
    const readOnly = GIT_READ_ONLY.filter((p) => existsSync(p))
    const env: Record<string, string> = { ...opts.env }
    if (o.pythonRoot) {
      readOnly.push(o.pythonRoot)
      env.PATH = `${join(o.pythonRoot, 'bin')}:/usr/local/bin:/usr/bin:/bin`
    }
    const gitconfig = join(homedir(), '.gitconfig')
    if (isFile(gitconfig) && !insideAny(gitconfig, policy.roots)) {
      readOnly.push(gitconfig)
      env.GIT_CONFIG_GLOBAL = gitconfig
    }
    // Every command starts under jail-init: seccomp, and the egress relay when the
    // network is on. It needs node, its own script and vis_confine.node.
    const init = await jailInitEntry()
    const addon = findNative('vis_confine.node')
    if (!addon) {
      throw new VisError(
        'confine.addon-missing',
        'vis_confine.node is not built: run `npm run build:addon`',
        {
          sessionId: o.sessionId,
          op: 'spawn',
        },
      )
    }
    readOnly.push(init.endsWith('.mjs') ? init : join(packageRoot, 'dist'), addon)
    env.VIS_CONFINE_DIR = dirname(addon)
    // jail-init reports how the command ended on fd 3 (see jail-init.ts).
    env.VIS_JAIL_STATUS_FD = String(STATUS_FD)
    const jail = await spawnConfined(
      {
        roots: policy.roots,
        readOnly,
        hidden: policy.hidden ?? [],
        network: policy.network,
        shell: true,
        limits: policy.limits ?? {},
      },
      process.execPath,
      [init, exe, ...args],
      {
        env,
        stdio: [opts.stdin, 'pipe', 'pipe', 'pipe'],
        cwd: opts.cwd,
        sessionId: o.sessionId,
        pty: opts.pty,
      },
    )
    return { child: jail.child, jailed: true, kill: () => jail.kill(), status: readStatus(jail.child) }
  }
}

const STATUS_FD = 3

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
// looked up on the host's PATH, but only in system directories the jail shows.
function resolveOnHost(command: string, sessionId: string): string {
  if (isAbsolute(command)) return command
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => /^\/usr\/(local\/)?s?bin$/.test(d))
  for (const d of [...dirs, '/usr/bin', '/usr/local/bin']) {
    const p = join(d, command)
    if (isFile(p)) return p
  }
  throw new VisError('tool.spawn', `${command} is not installed in /usr/bin or /usr/local/bin`, {
    sessionId,
    op: 'spawn',
  })
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile()
  } catch {
    return false
  }
}

const insideAny = (p: string, dirs: string[]) => dirs.some((d) => p === d || p.startsWith(`${d}/`))
