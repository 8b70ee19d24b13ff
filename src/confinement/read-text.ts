import { constants as C } from 'node:fs'
import { closeFd, errCode, isAbsent, openAt2, readCapped, STRICT, statFd, Tree } from './beneath.js'

export type TextFile =
  | { kind: 'absent' }
  | { kind: 'text'; text: string }
  // Present but not read: why, for a warning a person can act on.
  | { kind: 'skipped'; reason: string }

// One file of `dir` the host reads as text (AGENTS.md/CLAUDE.md and prompt templates,
// src/agent/read-text.ts; a project's pyproject.toml/setup.cfg, src/project/declared.ts): read
// asynchronously, a regular file only, opened O_NONBLOCK (a FIFO is never waited on), at most
// `max` bytes. Where a sandbox may write the directory (`strict`: a session root, or the
// workspace's ancestors, which may be another session's root; the file tools read the ignore
// files above a root this way too, src/tools/fs/gitignore.ts) the name is resolved beneath the
// directory's fd with no symlink at all (a link planted there would put any host file into what
// the host reads); only in the vis home, which no sandbox writes, is a person's own link followed.
export async function readTextBeneath(
  dir: string,
  name: string,
  strict: boolean,
  max: number,
): Promise<TextFile> {
  return (await readFirstTextBeneath(dir, [name], strict, max)).file
}

// The first of `names` present in `dir` (AGENTS.md, else CLAUDE.md), read as readTextBeneath
// reads one, with the directory opened once for all of them.
export async function readFirstTextBeneath(
  dir: string,
  names: readonly [string, ...string[]],
  strict: boolean,
  max: number,
): Promise<{ name: string; file: TextFile }> {
  let tree: Tree
  try {
    tree = Tree.open(dir)
  } catch (err) {
    if (isAbsent(err) || errCode(err) === 'EACCES') return { name: names[0], file: { kind: 'absent' } }
    throw err
  }
  try {
    for (const name of names) {
      const file = await readIn(tree, name, strict, max)
      if (file.kind !== 'absent') return { name, file }
    }
    return { name: names[0], file: { kind: 'absent' } }
  } finally {
    await tree.close()
  }
}

async function readIn(tree: Tree, name: string, strict: boolean, max: number): Promise<TextFile> {
  let fd: number
  try {
    fd = openAt2(
      tree.fd,
      name,
      C.O_RDONLY | C.O_NONBLOCK | C.O_NOCTTY | (strict ? C.O_NOFOLLOW : 0),
      strict ? STRICT : 0,
    )
  } catch (err) {
    if (errCode(err) === 'ENOENT') return { kind: 'absent' }
    if (strict && (errCode(err) === 'ELOOP' || errCode(err) === 'EXDEV'))
      return {
        kind: 'skipped',
        reason: 'a symbolic link, never followed (a sandbox may write this directory)',
      }
    if (errCode(err) === 'ENXIO') return { kind: 'skipped', reason: 'not a regular file (a FIFO or socket)' }
    return { kind: 'skipped', reason: `cannot be opened (${errCode(err) ?? 'error'})` }
  }
  try {
    const st = await statFd(fd)
    if (st.isDirectory()) return { kind: 'skipped', reason: 'a directory, not a file (EISDIR)' }
    if (!st.isFile())
      return { kind: 'skipped', reason: 'not a regular file (a FIFO or device is never read)' }
    const { data, over } = await readCapped(fd, max)
    if (over) return { kind: 'skipped', reason: `larger than ${max} bytes` }
    return { kind: 'text', text: data.toString('utf8') }
  } finally {
    await closeFd(fd)
  }
}
