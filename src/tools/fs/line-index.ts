import { Pacer } from '../../util/pacer.js'

// Where the lines of a text start, counted the way lines.ts splitLines() splits (LF or CRLF;
// a final line break does not start an empty line), without splitting it. A sandbox-written file
// of 32 MiB may hold 33 million lines: an array of them costs the host seconds and gigabytes,
// while the file tools answer a page of them. The index keeps every STRIDE-th line's start and is
// built in paced slices, so the host's event loop runs while it counts.
const STRIDE = 1024

export class LineIndex {
  private constructor(
    private readonly text: string,
    // starts[j]: the offset of line j * STRIDE + 1.
    private readonly starts: number[],
    readonly total: number,
  ) {}

  static async of(text: string, pace: Pacer = new Pacer()): Promise<LineIndex> {
    const starts = [0]
    let breaks = 0
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
      breaks++
      if (breaks % STRIDE === 0) starts.push(i + 1)
      const wait = pace.charge(1)
      if (wait) await wait
    }
    const total = text === '' ? 0 : breaks + (text.endsWith('\n') ? 0 : 1)
    return new LineIndex(text, starts, total)
  }

  // The offset where line k (1-based, 1..total) starts.
  start(k: number): number {
    const j = Math.floor((k - 1) / STRIDE)
    let at = this.starts[j]!
    for (let n = (k - 1) % STRIDE; n > 0; n--) at = this.text.indexOf('\n', at) + 1
    return at
  }

  // The text of lines from..to (1-based, inclusive, within 1..total), without their line breaks.
  lines(from: number, to: number): string[] {
    const out: string[] = []
    let at = from <= to ? this.start(from) : 0
    for (let k = from; k <= to; k++) {
      const nl = this.text.indexOf('\n', at)
      const end = nl < 0 ? this.text.length : nl
      out.push(this.text.slice(at, nl > at && this.text[nl - 1] === '\r' ? end - 1 : end))
      at = end + 1
    }
    return out
  }

  line(k: number): string {
    return this.lines(k, k)[0]!
  }

  // The line (1-based) that holds the character at `offset`.
  lineAt(offset: number): number {
    let lo = 0
    let hi = this.starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (this.starts[mid]! <= offset) lo = mid
      else hi = mid - 1
    }
    let k = lo * STRIDE + 1
    for (
      let i = this.text.indexOf('\n', this.starts[lo]!);
      i >= 0 && i < offset;
      i = this.text.indexOf('\n', i + 1)
    )
      k++
    return k
  }
}
