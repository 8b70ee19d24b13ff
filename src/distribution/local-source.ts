import { closeSync, openSync, readlinkSync } from 'node:fs'
import { dirname } from 'node:path'
import { VisError } from '../util/errors.js'
import { writableRootHolding } from '../util/writable-roots.js'

// A file:// source (VIS_PYTHON_DIST_URL=file://DIR/cpython, an offline kit) is read from disk, and
// the tree it unpacks is run by the host itself (the guest bytecode compile) before any jail. The
// archive's checksum comes from the json beside it, so whoever writes the kit chooses both: a kit
// inside a root a sandbox can write (this process's sessions' or any live jail's) would let a
// block choose the host's CPython. Each file is opened first, then judged by its path and by where
// the opened file really lies, and read through that same descriptor: a link or a directory swapped
// after the check does not change what is read.

// Where an open descriptor's file lies now (Linux's /proc), or undefined where that is not told.
function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    return undefined
  }
}

// What the file is: a kit's archive or json (VIS_PYTHON_DIST_URL), or an archive given to
// `vis runtime stage --from-archive`, whose unpacked tree the host runs just the same.
export type LocalSourceKind = 'kit' | 'archive'

function refusal(url: string, path: string, root: string, kind: LocalSourceKind): VisError {
  if (kind === 'archive') {
    return new VisError(
      'dist.source-in-root',
      `the archive ${path} lies inside ${root}, a root a session of this or another vis process can write, ` +
        'so the host does not stage it: a sandbox could have chosen the CPython the host then runs. Move ' +
        'the archive outside every session root and stage it from there. Nothing was staged.',
      { url, path, root },
    )
  }
  return new VisError(
    'dist.source-in-root',
    `the CPython kit at ${dirname(path)} (${url}) lies inside ${root}, a root a session of this or ` +
      'another vis process can write, so the host does not read it: a sandbox could replace the archive ' +
      'and its checksum together. Move the kit outside every session root and point ' +
      'VIS_PYTHON_DIST_URL=file://<its new place> at it. Nothing was installed.',
    { url, path, root },
  )
}

// Test-only: runs between the path's check and the open, so a test can swap the file there every
// time (test/distribution/kit-in-root.test.ts). Never set by the package itself.
export const localSourceTestHooks: { beforeOpen?: (path: string) => void } = {}

// Opens the file at `path` (read from `url`) for reading, or throws dist.source-in-root when it or
// the file it opened lies in a writable root. The caller reads through the fd and closes it.
export function openLocalSource(url: string, path: string, kind: LocalSourceKind = 'kit'): number {
  const before = writableRootHolding(path)
  if (before !== undefined) throw refusal(url, path, before, kind)
  localSourceTestHooks.beforeOpen?.(path)
  const fd = openSync(path, 'r')
  const opened = openedPath(fd)
  const after = opened === undefined ? undefined : writableRootHolding(opened)
  if (after !== undefined) {
    closeSync(fd)
    throw refusal(url, path, after, kind)
  }
  return fd
}
