import { closeFd, readAll, readAt, type Tree } from '../confinement/beneath.js'
import { SNIFF_BYTES, sniffBinary } from '../tools/fs/binary.js'
import { checkpoint } from '../util/check-use-hook.js'
import { type Change, changedWhileRead, gitMode, readEntry } from './changes.js'
import { unifiedHunks } from './unified.js'

// Past this a text file's diff is summarised, not printed.
const MAX_TEXT_BYTES = 2 * 1024 * 1024

type Side = { text?: string; binary?: string }

// One side of a change, read from its tree as the scan typed it: a file that turned into a
// symlink (or anything else) since is refused (draft.changed), never followed.
async function side(tree: Tree | undefined, path: string, type: Change['type']): Promise<Side> {
  if (tree === undefined) return { text: '' }
  if (type === 'symlink') return { text: `${await readEntry(tree, path, type, 'draft.diff')}\n` }
  await checkpoint('draft.diff.read', path)
  const f = await tree.openFile(path)
  if (!f) throw changedWhileRead(path, 'draft.diff')
  try {
    const sample = Buffer.alloc(Math.min(f.st.size, SNIFF_BYTES))
    await readAt(f.fd, sample, sample.length, 0)
    const binary = sniffBinary(sample)
    if (binary) return { binary }
    if (f.st.size > MAX_TEXT_BYTES) return { binary: `text of ${f.st.size} bytes, too large to show` }
    return { text: (await readAll(f.fd)).toString('utf8') }
  } finally {
    await closeFd(f.fd)
  }
}

// git's extended unified diff: headers for new/deleted files, modes and renames, and
// "Binary files ... differ" instead of binary content.
export async function renderDiff(changes: Change[], upper: Tree, real: Tree): Promise<string> {
  const parts: string[] = []
  for (const c of changes) {
    const oldPath = c.status === 'renamed' ? c.from! : c.path
    const head = [`diff --git a/${oldPath} b/${c.path}`]
    if (c.status === 'added') head.push(`new file mode ${gitMode(c.type, c.mode)}`)
    if (c.status === 'deleted') head.push(`deleted file mode ${gitMode(c.type, c.mode)}`)
    if (c.oldMode !== undefined)
      head.push(`old mode ${gitMode(c.type, c.oldMode)}`, `new mode ${gitMode(c.type, c.mode)}`)
    if (c.status === 'renamed') head.push(`rename from ${c.from}`, `rename to ${c.path}`)
    if (c.status === 'renamed') {
      parts.push(`${head.join('\n')}\n`)
      continue
    }
    const before = await side(c.status === 'added' ? undefined : real, c.path, c.type)
    const after = await side(c.status === 'deleted' ? undefined : upper, c.path, c.type)
    const a = c.status === 'added' ? '/dev/null' : `a/${c.path}`
    const b = c.status === 'deleted' ? '/dev/null' : `b/${c.path}`
    if (before.binary || after.binary) {
      head.push(`Binary files ${a} and ${b} differ (${after.binary ?? before.binary})`)
      parts.push(`${head.join('\n')}\n`)
      continue
    }
    const hunks = unifiedHunks(before.text ?? '', after.text ?? '')
    parts.push(hunks ? `${head.join('\n')}\n--- ${a}\n+++ ${b}\n${hunks}` : `${head.join('\n')}\n`)
  }
  return parts.join('')
}
