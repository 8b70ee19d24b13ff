import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, mkdirSync, openSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { Overlay } from '../contracts/jail-policy.js'
import { VisError } from '../util/errors.js'
import { hostProgramPath, trustedSearchPath } from '../util/host-programs.js'
import { realish } from '../util/real-path.js'

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

// The holder's script: $1 the overlay's options, $2 the root's path, $3 a folder of stage points,
// then pairs of a host place's real path and its path below the root. A blank draft hides the real
// root, yet the jail binds the host's own places inside it (the package, its node_modules: an
// `npm install vis-runtime` in a project rooted at the project) and needs them there. So each is
// bound to a stage point first, while the real root is still visible, then back over the overlay
// at its place, and made read-only where the kernel lets this namespace (a filesystem mounted
// nosuid or nodev refuses a remount that does not repeat its locked flags; every jail binds the
// places read-only anyway, this covers the unjailed trusted extension worker). The places are the
// host's own, which no sandbox writes (bound read-only in every jail, refused by the host tools);
// the mounts live in this namespace only.
const HOLDER_SCRIPT = [
  'set -e',
  'opts=$1; root=$2; stage=$3; shift 3',
  'i=0; for x in "$@"; do if [ $((i % 2)) = 0 ]; then mount --bind "$x" "$stage/$i"; fi; i=$((i + 1)); done',
  'mount -t overlay -o "$opts" overlay "$root"',
  'i=0; for x in "$@"; do',
  '  if [ $((i % 2)) = 1 ]; then j=$((i - 1)); mount --bind "$stage/$j" "$root/$x"; mount -o remount,bind,ro "$root/$x" || :; fi',
  '  i=$((i + 1)); done',
  'echo ready',
  'exec sleep infinity',
].join('\n')

async function start(o: Overlay): Promise<Holder> {
  const work = join(o.dir, 'work')
  mkdirSync(work, { recursive: true })
  const stage = join(o.dir, 'stage')
  const real = realish(o.root)
  const kept: string[] = []
  for (const [i, place] of (o.keep ?? []).entries()) {
    mkdirSync(join(stage, String(2 * i)), { recursive: true })
    kept.push(place, relative(real, place))
  }
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
      HOLDER_SCRIPT,
      'vis-draft-mount',
      opts,
      o.root,
      stage,
      ...kept,
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
