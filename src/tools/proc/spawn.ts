import { spawn as nodeSpawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { VisError } from '../../util/errors.js'
import { hostProgramPath, trustedSearchPath } from '../../util/host-programs.js'
import { hostBaseEnv } from '../shell/env.js'
import type { SpawnHook, ToolProcess } from '../types.js'
import { isAlive, killTree, newTreeToken, processTree, TREE_MARK } from './tree.js'

// The unjailed spawner: a plain process on the host, in its own session and
// process group, marked with a tree token so even a daemon that double-forks
// and calls setsid is found and killed with it. Used when a session runs
// without the OS jail (the runtime's `confine: false`) and by direct callers.
export const hostSpawn: SpawnHook = async (command, args, o) => {
  const token = newTreeToken()
  // By absolute path from the system directories: the host's PATH may lead with a directory in
  // a root (util/host-programs.ts). What the program itself runs follows the env's PATH.
  const file = isAbsolute(command) ? command : hostProgramPath(command)
  if (!file) {
    throw new VisError(
      'tool.spawn',
      `${command} is not installed in the system directories (${trustedSearchPath().join(':')}); install it there, or name its directories in VIS_HOST_PATH`,
      { op: 'spawn' },
    )
  }
  const child = nodeSpawn(file, args, {
    cwd: o.cwd,
    env: { ...hostBaseEnv(), ...o.env, [TREE_MARK]: token },
    detached: true,
    stdio: [o.stdin, 'pipe', 'pipe'],
  })
  return {
    child,
    jailed: false,
    kill() {
      if (child.pid !== undefined) killTree(child.pid, token)
    },
  }
}

// Asks the whole tree to end (SIGTERM, so servers can clean up), waits up to
// `graceMs`, then kills whatever is left through the spawner's own kill.
// Processes named in `spare` (relays such as `script`, which would cut the
// output of a server saying goodbye) are left to exit with what they relay.
export async function terminate(proc: ToolProcess, graceMs = 500, spare: string[] = []): Promise<void> {
  const root = proc.child.pid
  if (root === undefined) return
  // A jail's own wrappers (bubblewrap) are spared: ending them first would
  // take the whole pid namespace down before the command could clean up.
  const first = processTree(root).filter((pid) => {
    const name = commandName(pid)
    return !spare.includes(name) && !(proc.jailed && name === 'bwrap')
  })
  for (const pid of first) {
    try {
      process.kill(pid, 'SIGTERM')
    } catch {}
  }
  const end = Date.now() + graceMs
  while (Date.now() < end && first.some(isAlive)) await new Promise((r) => setTimeout(r, 20))
  proc.kill()
}

function commandName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return ''
  }
}
