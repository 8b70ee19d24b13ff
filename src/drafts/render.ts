import { open, readlink } from 'node:fs/promises'
import { join } from 'node:path'
import { SNIFF_BYTES, sniffBinary } from '../tools/fs/binary.js'
import { type Change, gitMode } from './changes.js'
import { unifiedHunks } from './unified.js'

// Past this a text file's diff is summarised, not printed.
const MAX_TEXT_BYTES = 2 * 1024 * 1024

type Side = { text?: string; binary?: string }

async function side(path: string | undefined, type: Change['type']): Promise<Side> {
  if (path === undefined) return { text: '' }
  if (type === 'symlink') return { text: `${await readlink(path)}\n` }
  const fh = await open(path)
  try {
    const { size } = await fh.stat()
    const sample = Buffer.alloc(Math.min(size, SNIFF_BYTES))
    await fh.read(sample, 0, sample.length, 0)
    const binary = sniffBinary(sample)
    if (binary) return { binary }
    if (size > MAX_TEXT_BYTES) return { binary: `text of ${size} bytes, too large to show` }
    return { text: (await fh.readFile()).toString('utf8') }
  } finally {
    await fh.close()
  }
}

// git's extended unified diff: headers for new/deleted files, modes and renames, and
// "Binary files ... differ" instead of binary content.
export async function renderDiff(changes: Change[], real: string): Promise<string> {
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
    const before = await side(c.status === 'added' ? undefined : join(real, c.path), c.type)
    const after = await side(c.status === 'deleted' ? undefined : c.source, c.type)
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
