import { readSync } from 'node:fs'

// A file's bytes through `fd`, read until its end but never more than `room` (undefined past it):
// the size a file claims is not trusted (a link to /proc/self/pagemap says 0, a FIFO none), so the
// bound is on what is read.
export function readBounded(fd: number, room: number): Buffer | undefined {
  const chunks: Buffer[] = []
  let total = 0
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, room - total + 1))
    const n = readSync(fd, chunk, 0, chunk.length, null)
    if (n === 0) return Buffer.concat(chunks, total)
    total += n
    if (total > room) return undefined
    chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n))
  }
}
