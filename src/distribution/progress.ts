// Progress events from long steps. The CLI renders them (a bar on a TTY,
// lines otherwise); library callers may ignore them.
export type ProgressEvent = {
  step: string
  detail?: string
  // Byte counts for transfers; absent for steps without a measurable size.
  done?: number
  total?: number
}
export type OnProgress = (event: ProgressEvent) => void

export const noProgress: OnProgress = () => {}

function mb(n: number): string {
  return `${(n / 1024 / 1024).toFixed(1)} MB`
}

// Renders progress events on stderr: a redrawn bar for transfers on a TTY,
// plain lines otherwise (a log, CI). Transfers print at most every 25% off a
// TTY so logs stay short.
export function progressPrinter(stream: NodeJS.WriteStream = process.stderr): OnProgress {
  const tty = stream.isTTY === true
  let barOpen = false
  let lastQuarter = -1
  let lastStep = ''
  let lastTick = -1
  // When the current transfer started, for its rate.
  let started = 0
  const rate = (done: number) => {
    const s = (Date.now() - started) / 1000
    return s > 0.05 ? ` ${mb(done / s)}/s` : ''
  }
  const closeBar = () => {
    if (barOpen) stream.write('\n')
    barOpen = false
    lastTick = -1
  }
  return (e: ProgressEvent) => {
    if (e.done === undefined) {
      closeBar()
      lastQuarter = -1
      started = 0
      stream.write(`${e.step}: ${e.detail ?? ''}\n`)
      lastStep = e.step
      return
    }
    if (e.step !== lastStep || !started) started = Date.now()
    const fraction = e.total ? Math.min(1, e.done / e.total) : undefined
    if (tty) {
      // Redraw when the shown figure changes, not on every chunk.
      const tick = fraction === undefined ? Math.floor(e.done / (256 * 1024)) : Math.floor(fraction * 100)
      if (barOpen && tick === lastTick) return
      lastTick = tick
      const width = 30
      const filled = fraction === undefined ? 0 : Math.round(fraction * width)
      const pct = fraction === undefined ? '' : ` ${Math.floor(fraction * 100)}%`
      const size = e.total ? `${mb(e.done)} / ${mb(e.total)}` : mb(e.done)
      stream.write(
        `\r${e.step} [${'='.repeat(filled)}${' '.repeat(width - filled)}]${pct} ${size}${rate(e.done)}\x1b[K`,
      )
      barOpen = true
      lastStep = e.step
      return
    }
    if (e.step !== lastStep) {
      stream.write(`${e.step}: ${e.detail ?? ''}\n`)
      lastStep = e.step
    }
    const quarter = fraction === undefined ? -1 : Math.floor(fraction * 4)
    if (quarter > lastQuarter) {
      lastQuarter = quarter
      stream.write(`${e.step}: ${mb(e.done)}${e.total ? ` of ${mb(e.total)}` : ''}${rate(e.done)}\n`)
    }
  }
}
