import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, mkdirSync, openSync } from 'node:fs'
import { join } from 'node:path'
import type { Overlay } from '../contracts/jail-policy.js'
import { VisError } from '../util/errors.js'
import { hostProgramPath, trustedSearchPath } from '../util/host-programs.js'

// One overlay mount per draft, shared by every jail of the session. overlayfs does not
// revalidate cached entries of local layers, so two mounts over one upper directory would
// each keep serving what they had looked up before the other wrote. Instead a holder
// process owns a mount namespace (in a user namespace of its own, so no privilege is
// needed) that is a copy of the host's with the overlay mounted at the root's path; the
// worker and each tool jail enter it (nsenter) before bubblewrap, whose bind of the root
// then binds this one overlay. The host file tools read it through /proc/<holder>/root.
type Holder = { child: ChildProcess; pid: number; user: number; mnt: number }

const READY_MS = 30_000
const holders = new Map<string, Promise<Holder>>()

export async function draftMount(o: Overlay): Promise<{ pid: number; user: number; mnt: number }> {
  let p = holders.get(o.dir)
  if (!p) {
    p = start(o)
    holders.set(o.dir, p)
    p.catch(() => holders.delete(o.dir))
  }
  const h = await p
  if (h.child.exitCode !== null || h.child.signalCode !== null) {
    holders.delete(o.dir)
    return draftMount(o)
  }
  return { pid: h.pid, user: h.user, mnt: h.mnt }
}

// The holder's pid, when its mount is up (for the host file tools).
export async function draftMountPid(o: Overlay): Promise<number> {
  return (await draftMount(o)).pid
}

export async function releaseDraftMount(dir: string): Promise<void> {
  const p = holders.get(dir)
  holders.delete(dir)
  const h = await p?.catch(() => undefined)
  if (!h) return
  for (const fd of [h.user, h.mnt]) {
    try {
      closeSync(fd)
    } catch {}
  }
  // Not awaited: when its namespace's last process exits the kernel unmounts the overlay,
  // which syncs the upper directory's whole filesystem (seconds, on a busy disk). Nothing
  // new can use the mount meanwhile: its namespace fds are closed above.
  if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill('SIGKILL')
}

export async function releaseAllDraftMounts(): Promise<void> {
  await Promise.all([...holders.keys()].map((d) => releaseDraftMount(d)))
}

process.once('exit', () => {
  for (const p of holders.values()) void p.then((h) => h.child.kill('SIGKILL')).catch(() => undefined)
})

async function start(o: Overlay): Promise<Holder> {
  const work = join(o.dir, 'work')
  mkdirSync(work, { recursive: true })
  const opts = `lowerdir=${o.lower},upperdir=${o.upper},workdir=${work},userxattr,index=off`
  // util-linux's unshare from the system directories (util/host-programs.ts), never PATH.
  const unshare = hostProgramPath('unshare')
  if (!unshare) {
    throw new VisError(
      'draft.mount',
      `could not mount the draft's overlay on ${o.root}: unshare is not installed in ${trustedSearchPath().join(':')} (apt-get install util-linux)`,
      { op: 'draft', path: o.root },
    )
  }
  const child = spawn(
    unshare,
    [
      '--map-current-user',
      '--mount',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      'mount -t overlay -o "$1" overlay "$2" && echo ready && exec sleep infinity',
      'vis-draft-mount',
      opts,
      o.root,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  try {
    await new Promise<void>((resolve, reject) => {
      let out = ''
      let err = ''
      const timer = setTimeout(() => reject(new Error('it did not start in time')), READY_MS)
      child.stderr?.on('data', (d: Buffer) => {
        if (err.length < 2000) err += d.toString()
      })
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString()
        if (out.includes('ready\n')) {
          clearTimeout(timer)
          resolve()
        }
      })
      child.once('error', (e) => {
        clearTimeout(timer)
        reject(e)
      })
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`it exited (${code}): ${err.trim().slice(-500)}`))
      })
    })
    const pid = child.pid!
    return {
      child,
      pid,
      user: openSync(`/proc/${pid}/ns/user`, 'r'),
      mnt: openSync(`/proc/${pid}/ns/mnt`, 'r'),
    }
  } catch (err) {
    child.kill('SIGKILL')
    throw new VisError(
      'draft.mount',
      `could not mount the draft's overlay on ${o.root}: ${(err as Error).message}`,
      {
        op: 'draft',
        path: o.root,
      },
    )
  }
}
