import { constants as C } from 'node:fs'
import { type FileHandle, lstat, open, readdir } from 'node:fs/promises'
import { sep } from 'node:path'
import type { Json } from '../types.js'
import { type IgnoreReader, IgnoreStack } from './gitignore.js'
import { at, isWithin } from './paths.js'
import { entryType } from './read.js'

export interface WalkOptions {
  hidden: boolean
  gitignore: boolean
  // The real path of the root the walk's directory is in (ignore files above it are not read).
  limit: string
  // Real paths of directories the walk must not enter or show (the session's hidden
  // extension directories), whatever `hidden` says.
  skip?: readonly string[]
  // How ignore files above the walked directory are read (default: by name).
  ignoreFiles?: IgnoreReader
}

interface Entry {
  name: string
  abs: string
  type: string
}

// Lists one directory through its handle, filtered by the walk's rules.
async function entries(
  dir: FileHandle,
  dirAbs: string,
  rules: IgnoreStack,
  opts: WalkOptions,
): Promise<Entry[]> {
  const list = await readdir(at(dir), { withFileTypes: true }).catch(() => [])
  const out: Entry[] = []
  for (const d of list) {
    if (d.name === '.git') continue
    if (!opts.hidden && d.name.startsWith('.')) continue
    const abs = dirAbs === sep ? sep + d.name : dirAbs + sep + d.name
    if (opts.skip?.some((h) => isWithin(abs, h))) continue
    const type = entryType(d)
    if (opts.gitignore && (await rules.ignored(abs, type === 'directory'))) continue
    out.push({ name: d.name, abs, type })
  }
  return out.sort((a, b) => compareNames(a.name, b.name))
}

export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

// Opens a subdirectory relative to its parent's handle, refusing a symlink
// swapped in since the listing, so the walk never leaves the tree it checked.
async function openChild(dir: FileHandle, name: string): Promise<FileHandle | undefined> {
  return open(at(dir, name), C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW).catch(() => undefined)
}

async function rulesFor(dirAbs: string, opts: WalkOptions): Promise<IgnoreStack> {
  if (!opts.gitignore) return IgnoreStack.none()
  return (await IgnoreStack.at(dirAbs, opts.limit, opts.ignoreFiles)) ?? IgnoreStack.none()
}

export interface TreeNode {
  [key: string]: Json
}

// A bounded tree, breadth first so a budget shows the top levels before the
// depths of the first subdirectory.
export async function walkTree(
  root: FileHandle,
  rootAbs: string,
  display: (abs: string) => Promise<string>,
  opts: WalkOptions & { depth: number; maxEntries: number },
): Promise<{ tree: TreeNode; entries: number; truncated: boolean }> {
  const tree: TreeNode = {
    name: rootAbs.split(sep).pop() || sep,
    path: await display(rootAbs),
    type: 'directory',
  }
  const queue: {
    fh: FileHandle
    abs: string
    node: TreeNode
    depth: number
    rules: IgnoreStack
    own: boolean
  }[] = [{ fh: root, abs: rootAbs, node: tree, depth: 0, rules: await rulesFor(rootAbs, opts), own: false }]
  let count = 0
  let truncated = false
  try {
    while (queue.length) {
      const q = queue.shift()!
      try {
        if (q.depth >= opts.depth) {
          continue
        }
        const children: TreeNode[] = []
        q.node.children = children
        for (const e of await entries(q.fh, q.abs, q.rules, opts)) {
          if (count >= opts.maxEntries) {
            truncated = true
            break
          }
          count++
          const st = await lstat(at(q.fh, e.name)).catch(() => undefined)
          const node: TreeNode = {
            name: e.name,
            path: await display(e.abs),
            type: e.type,
            size: st?.size ?? null,
          }
          if (e.type === 'directory') {
            node.size = null
            const fh = await openChild(q.fh, e.name)
            if (fh) {
              const rules = opts.gitignore ? await q.rules.descend(e.abs, fh) : q.rules
              queue.push({ fh, abs: e.abs, node, depth: q.depth + 1, rules, own: true })
            }
          }
          children.push(node)
        }
      } finally {
        if (q.own) await q.fh.close()
      }
    }
  } finally {
    for (const q of queue) if (q.own) await q.fh.close()
  }
  return { tree, entries: count, truncated }
}

// Every searchable file under a directory in path order: what ripgrep would
// search there (no hidden files, .gitignore honoured, symlinks not followed).
export async function listFiles(
  root: FileHandle,
  rootAbs: string,
  opts: WalkOptions,
  max: number,
): Promise<string[]> {
  const out: string[] = []
  const visit = async (fh: FileHandle, abs: string, rules: IgnoreStack): Promise<void> => {
    for (const e of await entries(fh, abs, rules, opts)) {
      if (out.length >= max) return
      if (e.type === 'file') out.push(e.abs)
      else if (e.type === 'directory') {
        const child = await openChild(fh, e.name)
        if (!child) continue
        try {
          await visit(child, e.abs, opts.gitignore ? await rules.descend(e.abs, child) : rules)
        } finally {
          await child.close()
        }
      }
    }
  }
  await visit(root, rootAbs, await rulesFor(rootAbs, opts))
  return out
}
