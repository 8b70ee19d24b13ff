import { stat, writeFile } from 'node:fs/promises'
import { setTimeout as tick } from 'node:timers/promises'

// A draft's base is a reading of the filesystem's own clock: a real file whose ctime is not
// older than it changed after the draft began (apply's conflict check). That clock is coarse
// (the kernel stamps ctimes from a tick of a few milliseconds), so a real file written just
// before the draft began may carry the very reading the base would: it would count as changed
// (a false conflict, on the safe side, but a person has to resolve it). The base is therefore
// the first reading after the clock moved past the moment the draft began: everything written
// before has an older ctime, everything written after has this one or a later one.
const WAIT_MS = 1500 // past any coarse clock (ext4 and tmpfs: a jiffy; second-grained ones: 1 s)

export async function baseClock(file: string, content: string): Promise<number> {
  await writeFile(file, content)
  const began = (await stat(file)).ctimeMs
  const end = Date.now() + WAIT_MS
  for (;;) {
    await writeFile(file, content)
    const now = (await stat(file)).ctimeMs
    // A filesystem whose clock does not move within the wait keeps the first reading: files
    // written in its tick count as changed, which is the safe side.
    if (now > began || Date.now() > end) return now
    await tick(1)
  }
}
