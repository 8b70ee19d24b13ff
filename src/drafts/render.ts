import { closeFd, readAt, readCapped, type Tree } from '../confinement/beneath.js'
import { binaryContent, SNIFF_BYTES, sniffBinary, visibleText } from '../tools/fs/binary.js'
import { checkpoint } from '../util/check-use-hook.js'
import { type Change, changedWhileRead, gitMode, readLink } from './changes.js'
import { unifiedHunks } from './unified.js'

// Past this a text file's diff is summarised, not printed.
const MAX_TEXT_BYTES = 2 * 1024 * 1024

type Side = { text?: string; binary?: string }

// One side of a change, read from its tree as the scan typed it: a file that turned into a
// symlink (or anything else) since is refused (draft.changed), never followed.
async function side(tree: Tree | undefined, path: string, type: Change['type']): Promise<Side> {
  if (tree === undefined) return { text: '' }
  if (type === 'symlink') return { text: `${await readLink(tree, path, 'draft.diff')}\n` }
  await checkpoint('draft.diff.read', path)
  const f = await tree.openFile(path)
  if (!f) throw changedWhileRead(path, 'draft.diff')
  try {
    const sample = Buffer.alloc(Math.min(f.st.size, SNIFF_BYTES))
    await readAt(f.fd, sample, sample.length, 0)
    // Binary is git's rule, a NUL byte; only then is the file named (by its magic number). A
    // file in a legacy encoding is text, shown with its other bytes escaped (visibleText).
    if (sample.includes(0)) return { binary: sniffBinary(sample) ?? 'binary data' }
    if (f.st.size > MAX_TEXT_BYTES) return { binary: `text of ${f.st.size} bytes, too large to show` }
    // The file may have grown since its fstat: the read itself is what is bounded.
    const { data, over } = await readCapped(f.fd, MAX_TEXT_BYTES)
    if (over) return { binary: `text of more than ${MAX_TEXT_BYTES} bytes, too large to show` }
    // Shown as text only when no byte of it is a NUL (the sample above saw the first 8 KiB): one
    // further on would otherwise be shown as something it is not.
    if (data.includes(0)) return { binary: binaryContent(data) ?? 'binary data' }
    return { text: visibleText(data) }
  } finally {
    await closeFd(f.fd)
  }
}

const C_ESCAPES: Record<number, string> = {
  7: '\\a',
  8: '\\b',
  9: '\\t',
  10: '\\n',
  11: '\\v',
  12: '\\f',
  13: '\\r',
  34: '\\"',
  92: '\\\\',
}

// A path as git writes it in a diff: as is, or, when it holds a quote, a backslash, a control
// character or a byte past ASCII, C-quoted whole with its a/ or b/ prefix ("a/x\ny"). A name
// the sandbox chose can then never add lines to the diff a person reviews.
export function quotePath(prefixed: string): string {
  const bytes = Buffer.from(prefixed, 'utf8')
  if (!bytes.some((b) => b < 0x20 || b === 0x22 || b === 0x5c || b >= 0x7f)) return prefixed
  let out = '"'
  for (const b of bytes) {
    const esc = C_ESCAPES[b]
    if (esc !== undefined) out += esc
    else if (b < 0x20 || b >= 0x7f) out += `\\${b.toString(8).padStart(3, '0')}`
    else out += String.fromCharCode(b)
  }
  return `${out}"`
}

// git's extended unified diff: headers for new/deleted files, modes and renames, and
// "Binary files ... differ" instead of binary content.
export async function renderDiff(changes: Change[], upper: Tree, real: Tree): Promise<string> {
  const parts: string[] = []
  for (const c of changes) {
    const oldPath = c.status === 'renamed' ? c.from! : c.path
    const head = [`diff --git ${quotePath(`a/${oldPath}`)} ${quotePath(`b/${c.path}`)}`]
    if (c.status === 'added') head.push(`new file mode ${gitMode(c.type, c.mode)}`)
    if (c.status === 'deleted') head.push(`deleted file mode ${gitMode(c.type, c.mode)}`)
    if (c.oldMode !== undefined)
      head.push(`old mode ${gitMode(c.type, c.oldMode)}`, `new mode ${gitMode(c.type, c.mode)}`)
    if (c.status === 'renamed')
      head.push(`rename from ${quotePath(c.from!)}`, `rename to ${quotePath(c.path)}`)
    if (c.status === 'renamed') {
      parts.push(`${head.join('\n')}\n`)
      continue
    }
    const before = await side(c.status === 'added' ? undefined : real, c.path, c.type)
    const after = await side(c.status === 'deleted' ? undefined : upper, c.path, c.type)
    const a = c.status === 'added' ? '/dev/null' : quotePath(`a/${c.path}`)
    const b = c.status === 'deleted' ? '/dev/null' : quotePath(`b/${c.path}`)
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
