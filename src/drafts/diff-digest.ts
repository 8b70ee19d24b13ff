import { createHash } from 'node:crypto'
import type { Tree } from '../confinement/beneath.js'
import { type Change, digest } from './changes.js'

// What a diff showed, as one sha256: the rendered text and, for each change, its kind, modes
// and the draft side's content (a binary file's diff shows no content). apply({ expect })
// lands only when the draft still hashes to what the person reviewed.
export async function diffDigest(changes: Change[], upper: Tree, diff: string): Promise<string> {
  const h = createHash('sha256')
  h.update(`diff:${Buffer.byteLength(diff)}:`).update(diff)
  for (const c of changes) {
    const content = c.status === 'deleted' ? '-' : ((await digest(upper, c.path, c.type)) ?? 'changed')
    h.update(JSON.stringify([c.path, c.status, c.from ?? null, c.type, c.mode, c.oldMode ?? null, content]))
  }
  return h.digest('hex')
}
