import { constants as C, closeSync, openSync, readlinkSync } from 'node:fs'
import { basename } from 'node:path'
import { VisError } from '../util/errors.js'
import { O_PATH } from './beneath.js'
import { homesInside } from './protected-homes.js'
import { rootIdentity } from './root-guard.js'

// The host folders a jail shows read-only at a fixed path (a skill folder outside the roots, at
// /vis/skills/<name>). Such a folder may lie in another session's root, whose sandbox can rename
// it away and leave a symlink to any host directory in its place. So, like a root, it is pinned
// when it is found (device and inode), and every later use (each jail's bind, the host's `cat`)
// opens it once without following a final link, checks the fd names the pinned folder and no vis
// home, and then works only from that fd: nothing is looked up by its path again.

export type PinnedFolder = {
  // The folder's real path when found.
  source: string
  // Its identity then (rootIdentity); unset: only the link and vis-home rules apply.
  pin?: string
  // The skill's name, for the refusal.
  name: string
}

type Context = { sessionId?: string; op?: string }

// Whether a folder is, or contains, a vis home (of this user, any process): shown read-only it
// would still expose the home's database, keys and owner socket.
export function holdsVisHome(real: string): boolean {
  return homesInside(real).length > 0
}

// The refusal for a skill folder that is no longer the one found.
export function skillFolderChanged(name: string, ctx: Context): VisError {
  return new VisError(
    'skill.folder-changed',
    `Skill ${name}'s folder is no longer the folder it was when this session's worker found it (it was ` +
      'moved, replaced or swapped for a link): it is not shown. Restart the session (or its worker) to ' +
      'use what the folder is now.',
    { ...ctx, skill: name },
  )
}

export function skillFolderHome(name: string, ctx: Context): VisError {
  return new VisError(
    'skill.folder-vis-home',
    `Skill ${name}'s folder is or contains a vis home (a database, provider keys, an owner socket), which ` +
      'no session may see: it is not shown. Keep skills in a folder of their own.',
    { ...ctx, skill: name },
  )
}

// Opens the pinned folder as an O_PATH fd, or refuses (skill.folder-changed,
// skill.folder-vis-home). The caller closes the fd.
export function openPinnedFolder(folder: PinnedFolder, ctx: Context): number {
  let fd: number
  try {
    fd = openSync(folder.source, O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW)
  } catch {
    throw skillFolderChanged(folder.name, ctx)
  }
  try {
    if (folder.pin !== undefined && rootIdentity(fd) !== folder.pin)
      throw skillFolderChanged(folder.name, ctx)
    const real = readlinkSync(`/proc/self/fd/${fd}`)
    if (real.endsWith(' (deleted)')) throw skillFolderChanged(folder.name, ctx)
    if (holdsVisHome(real)) throw skillFolderHome(folder.name, ctx)
    return fd
  } catch (err) {
    closeSync(fd)
    throw err
  }
}

// The folders of a jail's mounts, opened: bound from these fds (target -> fd).
export function openMounts(
  mounts: readonly { source: string; target: string; pin?: string }[],
  ctx: Context,
): { fds: Map<string, number>; close(): void } {
  const fds = new Map<string, number>()
  const close = () => {
    for (const fd of fds.values()) {
      try {
        closeSync(fd)
      } catch {}
    }
    fds.clear()
  }
  try {
    for (const m of mounts) {
      fds.set(m.target, openPinnedFolder({ source: m.source, pin: m.pin, name: basename(m.target) }, ctx))
    }
  } catch (err) {
    close()
    throw err
  }
  return { fds, close }
}
