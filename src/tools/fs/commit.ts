import { randomBytes } from 'node:crypto'
import { constants as C } from 'node:fs'
import { type FileHandle, open, rename, unlink } from 'node:fs/promises'
import { VisError } from '../../util/errors.js'
import { at, refuseHardLinked } from './paths.js'

export interface PendingWrite {
  dir: FileHandle
  name: string
  path: string
  text: string
  mode: number
  // The content to put back if a later file of the same commit fails.
  previous?: string
  // The tool that writes (for its refusals).
  op?: string
}

async function writeTemp(w: PendingWrite, text: string): Promise<string> {
  const tmp = `.${w.name}.vis-${randomBytes(4).toString('hex')}.tmp`
  const fh = await open(at(w.dir, tmp), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, w.mode)
  try {
    await fh.writeFile(text, 'utf8')
    await fh.datasync()
  } finally {
    await fh.close()
  }
  return tmp
}

// Writes every file or none: all new contents go to temporaries beside their
// targets first, then each is renamed over its target (rename is atomic per
// file); if a rename fails, the files already replaced get their old text back.
export async function commitAll(writes: PendingWrite[]): Promise<void> {
  // Before anything is staged: one refused file leaves every file as it was.
  for (const w of writes) await refuseHardLinked(w.dir, w.name, w.path, w.op ?? 'write')
  const temps: string[] = []
  try {
    for (const w of writes) temps.push(await writeTemp(w, w.text))
  } catch (err) {
    await Promise.all(temps.map((t, i) => unlink(at(writes[i]!.dir, t)).catch(() => {})))
    throw new VisError(
      'tool.io',
      `could not stage the new contents: ${(err as Error).message}; nothing was changed`,
      {},
    )
  }
  const done: PendingWrite[] = []
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i]!
    try {
      await rename(at(w.dir, temps[i]!), at(w.dir, w.name))
      done.push(w)
    } catch (err) {
      for (let k = i; k < writes.length; k++) await unlink(at(writes[k]!.dir, temps[k]!)).catch(() => {})
      for (const d of done.reverse()) {
        if (d.previous === undefined) await unlink(at(d.dir, d.name)).catch(() => {})
        else await writeTemp(d, d.previous).then((t) => rename(at(d.dir, t), at(d.dir, d.name)))
      }
      throw new VisError(
        'tool.io',
        `could not replace '${w.path}': ${(err as Error).message}; nothing was changed`,
        {
          path: w.path,
        },
      )
    }
  }
}
