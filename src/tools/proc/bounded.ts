// Keeps the start and the end of a stream within a byte budget; the middle
// of a huge stream is dropped as it is read, never its first or last bytes.
export class HeadTail {
  private head: Buffer[] = []
  private headLen = 0
  private tail: Buffer[] = []
  private tailLen = 0
  total = 0

  constructor(
    private readonly headMax: number,
    private readonly tailMax: number,
  ) {}

  push(chunk: Buffer): void {
    this.total += chunk.length
    if (this.headLen < this.headMax) {
      const take = chunk.subarray(0, this.headMax - this.headLen)
      this.head.push(take)
      this.headLen += take.length
      chunk = chunk.subarray(take.length)
    }
    if (chunk.length === 0) return
    this.tail.push(chunk)
    this.tailLen += chunk.length
    while (this.tailLen - this.tail[0]!.length >= this.tailMax) this.tailLen -= this.tail.shift()!.length
  }

  get dropped(): number {
    return this.total - this.headLen - Math.min(this.tailLen, this.tailMax)
  }

  text(): string {
    const head = Buffer.concat(this.head)
    let tail = Buffer.concat(this.tail)
    if (tail.length > this.tailMax) tail = tail.subarray(tail.length - this.tailMax)
    const dropped = this.dropped
    if (dropped === 0) return Buffer.concat([head, tail]).toString('utf8')
    // Cut on character boundaries so neither side shows a broken character.
    let h = head.length
    while (h > 0 && h > head.length - 4 && (head[h - 1]! & 0xc0) === 0x80) h--
    if (h > 0 && (head[h - 1]! & 0xc0) === 0xc0) h--
    else h = head.length
    let t = 0
    while (t < tail.length && t < 4 && (tail[t]! & 0xc0) === 0x80) t++
    return `${head.subarray(0, h).toString('utf8')}\n… [${dropped} bytes omitted] …\n${tail.subarray(t).toString('utf8')}`
  }
}

// Keeps the last `capacity` bytes of a stream, addressed by absolute offsets
// (a cursor) so a reader can ask for what came after what it last saw.
export class Ring {
  private chunks: Buffer[] = []
  private len = 0
  total = 0

  constructor(private readonly capacity: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk)
    this.len += chunk.length
    this.total += chunk.length
    while (this.len - this.chunks[0]!.length >= this.capacity) this.len -= this.chunks.shift()!.length
  }

  // Bytes from `since` (absolute) to the end, at most `max` of the newest.
  read(since: number, max: number): { text: string; from: number; dropped: number } {
    let buf = Buffer.concat(this.chunks)
    if (buf.length > this.capacity) buf = buf.subarray(buf.length - this.capacity)
    const start = this.total - buf.length
    const from = Math.max(since, start, this.total - max)
    let slice = buf.subarray(from - start)
    let skip = 0
    while (skip < slice.length && skip < 4 && (slice[skip]! & 0xc0) === 0x80) skip++
    slice = slice.subarray(skip)
    return { text: slice.toString('utf8'), from: from + skip, dropped: Math.max(0, from - since) }
  }
}
