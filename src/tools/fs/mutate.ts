import { constants as C } from 'node:fs'
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  rename,
  rmdir,
  unlink,
} from 'node:fs/promises'
import { relative, sep } from 'node:path'
import { z } from 'zod'
import { checkpoint } from '../../util/check-use-hook.js'
import { VisError } from '../../util/errors.js'
import { bindNames, parseArgs, splitArgs } from '../args.js'
import type { Json, Tool } from '../types.js'
import { commitAll } from './commit.js'
import { at, isWithin, O_PATH, type PathGuard } from './paths.js'

type Obj = { [key: string]: Json }

function tool<S extends z.ZodTypeAny>(
  name: string,
  signature: string,
  names: string[],
  schema: S,
  doc: string,
  body: (a: z.infer<S>) => Promise<Obj>,
  writes = false,
): Tool {
  return {
    name,
    doc,
    signature,
    ...(writes ? { writes } : {}),
    async run(args) {
      const { positional, kwargs } = splitArgs(args)
      return body(parseArgs(name, signature, schema, bindNames(name, signature, names, positional, kwargs)))
    },
  }
}

// mkdir -p, one component at a time from the root that contains the path,
// each step opened relative to the last verified directory.
export async function createDirs(guard: PathGuard, path: string, op: string): Promise<{ created: boolean }> {
  const abs = await guard.lexical(path, op)
  const roots = [...guard.roots, ...(await guard.realRoots())].filter((r) => isWithin(abs, r))
  const root = roots.sort((a, b) => b.length - a.length)[0]!
  let { fh: cur } = await guard.open(root, op, O_PATH | C.O_DIRECTORY)
  let created = false
  let sofar = root
  try {
    for (const comp of relative(root, abs).split(sep).filter(Boolean)) {
      sofar = sofar === sep ? sep + comp : sofar + sep + comp
      const real = await readlink(at(cur))
      // A directory above the package may be created in (node_modules/other); one inside it not.
      await guard.refuseReadOnly(real === sep ? sep + comp : real + sep + comp, path, op, false)
      try {
        await mkdir(at(cur, comp))
        created = true
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw guard.fsError(err, path, op)
      }
      let next: FileHandle
      try {
        // A link here is followed only through the guard (which resolves it as the session,
        // or its draft, sees it, and checks where it led), never from this handle: from a
        // draft's handle an absolute link would resolve against the host's root.
        next = await open(at(cur, comp), O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW).catch(async (err) => {
          if ((err as NodeJS.ErrnoException).code !== 'ENOTDIR') throw err
          const st = await lstat(at(cur, comp)).catch(() => undefined)
          if (!st?.isSymbolicLink()) throw err
          return (await guard.open(sofar, op, O_PATH | C.O_DIRECTORY)).fh
        })
      } catch (err) {
        if (err instanceof VisError) throw err
        throw (err as NodeJS.ErrnoException).code === 'ENOTDIR'
          ? new VisError(
              'tool.not-a-directory',
              `${op}: '${comp}' in '${path}' exists and is not a directory`,
              {
                op,
                path,
              },
            )
          : guard.fsError(err, path, op)
      }
      await cur.close()
      cur = next
      await guard.verify(cur, path, op)
    }
  } finally {
    await cur.close().catch(() => {})
  }
  return { created }
}

// Removes a tree through directory handles opened without following
// symlinks, so a swapped-in link is unlinked rather than descended.
async function removeTree(dir: FileHandle): Promise<void> {
  for (const d of await readdir(at(dir), { withFileTypes: true })) {
    if (d.isDirectory()) {
      const child = await open(at(dir, d.name), O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW)
      try {
        await removeTree(child)
      } finally {
        await child.close()
      }
      await rmdir(at(dir, d.name))
    } else await unlink(at(dir, d.name))
  }
}

function typeOf(st: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean }): string {
  return st.isDirectory() ? 'directory' : st.isFile() ? 'file' : st.isSymbolicLink() ? 'symlink' : 'other'
}

// The tools' argument schemas do not depend on the session: built once, not at every session's
// setup (building them was most of what binding the default tools cost a warm-pool acquire).
const WRITE_ARGS = z.object({ path: z.string().min(1), content: z.string() }).strict()
const MOVE_ARGS = z
  .object({ src: z.string().min(1), dst: z.string().min(1), overwrite: z.boolean().default(false) })
  .strict()
const DELETE_ARGS = z.object({ path: z.string().min(1), recursive: z.boolean().default(false) }).strict()
const PATH_ARGS = z.object({ path: z.string().min(1) }).strict()

export function mutateTools(guard: PathGuard): Tool[] {
  const write = tool(
    'write',
    '(path, content, /)',
    ['path', 'content'],
    WRITE_ARGS,
    'Write a whole text file (created with its parent directories if missing, replaced atomically if present).',
    async (a) => {
      const lex = await guard.lexical(a.path, 'write')
      const parentAbs = lex.slice(0, lex.lastIndexOf(sep)) || sep
      await createDirs(guard, parentAbs, 'write')
      const ref = await guard.parent(a.path, 'write', true)
      try {
        // A link swapped in at the name from here on is replaced by the rename, never followed.
        await checkpoint('tool.entry', ref.real)
        const st = await lstat(at(ref.dir, ref.name)).catch(() => undefined)
        if (st?.isDirectory())
          throw new VisError('tool.is-directory', `write: '${a.path}' is a directory`, { path: a.path })
        const path = await guard.display(ref.real)
        await commitAll([
          {
            dir: ref.dir,
            name: ref.name,
            path,
            text: a.content,
            // The file's permission bits, never set-id ones: the host (root, maybe) writes it, and
            // model-written content must not become a set-id program outside the jail's nosuid mounts.
            mode: st ? st.mode & 0o777 : 0o644,
            op: 'write',
          },
        ])
        return { path, bytes: Buffer.byteLength(a.content), created: !st }
      } finally {
        await ref.dir.close()
      }
    },
    true,
  )

  const move = tool(
    'move',
    '(src, dst, /, *, overwrite=False)',
    ['src', 'dst'],
    MOVE_ARGS,
    'Move or rename a file or directory; refuses to replace an existing dst unless overwrite=True.',
    async (a) => {
      const from = await guard.parent(a.src, 'move')
      try {
        const to = await guard.parent(a.dst, 'move')
        try {
          await lstat(at(from.dir, from.name)).catch((err) => {
            throw guard.fsError(err, a.src, 'move')
          })
          const existing = await lstat(at(to.dir, to.name)).catch(() => undefined)
          if (existing && !a.overwrite) {
            throw new VisError(
              'tool.exists',
              `move: '${a.dst}' already exists; pass overwrite=True to replace it`,
              {
                op: 'move',
                path: a.dst,
              },
            )
          }
          await rename(at(from.dir, from.name), at(to.dir, to.name)).catch((err) => {
            throw guard.fsError(err, a.dst, 'move')
          })
          return { src: await guard.display(from.real), dst: await guard.display(to.real) }
        } finally {
          await to.dir.close()
        }
      } finally {
        await from.dir.close()
      }
    },
  )

  const del = tool(
    'delete',
    '(path, /, *, recursive=False)',
    ['path'],
    DELETE_ARGS,
    'Delete a file, a symlink (not its target) or an empty directory; recursive=True deletes a directory tree.',
    async (a) => {
      const ref = await guard.parent(a.path, 'delete')
      try {
        const st = await lstat(at(ref.dir, ref.name)).catch((err) => {
          throw guard.fsError(err, a.path, 'delete')
        })
        try {
          if (st.isDirectory()) {
            if (a.recursive) {
              const dir = await open(at(ref.dir, ref.name), O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW)
              try {
                await removeTree(dir)
              } finally {
                await dir.close()
              }
            }
            await rmdir(at(ref.dir, ref.name))
          } else await unlink(at(ref.dir, ref.name))
        } catch (err) {
          const e = guard.fsError(err, a.path, 'delete')
          if (e.code === 'tool.not-empty') {
            throw new VisError(
              'tool.not-empty',
              `delete: '${a.path}' is a non-empty directory; pass recursive=True`,
              {
                op: 'delete',
                path: a.path,
              },
            )
          }
          throw e
        }
        return { path: await guard.display(ref.real), deleted: typeOf(st) }
      } finally {
        await ref.dir.close()
      }
    },
  )

  const createDirsTool = tool(
    'create_dirs',
    '(path, /)',
    ['path'],
    PATH_ARGS,
    'Create a directory and any missing parents (like mkdir -p).',
    async (a) => {
      const r = await createDirs(guard, a.path, 'create_dirs')
      const { fh, real } = await guard.open(a.path, 'create_dirs', O_PATH | C.O_DIRECTORY)
      await fh.close()
      return { path: await guard.display(real), created: r.created }
    },
    true,
  )

  const exists = tool(
    'exists',
    '(path, /)',
    ['path'],
    PATH_ARGS,
    "Whether a path exists, and its type ('file', 'directory', 'other').",
    async (a) => {
      let opened: { fh: FileHandle; real: string }
      try {
        opened = await guard.open(a.path, 'exists', O_PATH)
      } catch (err) {
        if (err instanceof VisError && err.code === 'tool.not-found')
          return { path: a.path, exists: false, type: null }
        throw err
      }
      try {
        const st = await opened.fh.stat()
        return { path: await guard.display(opened.real), exists: true, type: typeOf(st) }
      } finally {
        await opened.fh.close()
      }
    },
  )

  return [write, move, del, createDirsTool, exists]
}
