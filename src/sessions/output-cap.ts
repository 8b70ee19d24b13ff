// Room past the configured cap for the guest runtime's own truncation marker, so honest
// output capped by the guest is never marked twice.
const MARKER_SLACK = 1024
// Dropped output past which the block is not printing but flooding: its worker is retired
// (a multiple of the cap, so a chatty block that merely overruns is only truncated).
const FLOOD_FACTOR = 16
const FLOOD_MIN_CHARS = 8 << 20

// One block's output budget, counted by the host in characters over both streams. The
// guest runtime caps its captured output too, but guest code can write past it (the
// capture's underlying writer, raw frames on the socket), so the host never trusts it.
export class OutputBudget {
  readonly capChars: number
  readonly floodChars: number
  private seen = 0
  dropped = 0

  constructor(capBytes: number) {
    this.capChars = capBytes + MARKER_SLACK
    this.floodChars = Math.max(capBytes * FLOOD_FACTOR, FLOOD_MIN_CHARS)
  }

  // The part of a streamed chunk that still fits; `flood` once the block has gone far
  // past the cap.
  take(chunk: string): { data: string; flood: boolean } {
    const room = Math.max(this.capChars - this.seen, 0)
    const data = chunk.length <= room ? chunk : chunk.slice(0, room)
    this.seen += data.length
    this.dropped += chunk.length - data.length
    return { data, flood: this.dropped > this.floodChars }
  }

  // The outcome the caller sees: its stdout no longer than the cap, with a visible
  // marker when the host dropped anything (in the stream or in the reply).
  capOutcome<T extends { stdout?: string }>(outcome: T): T {
    const stdout = outcome.stdout ?? ''
    const over = Math.max(stdout.length - this.capChars, 0)
    if (over === 0 && this.dropped === 0) return outcome
    const kept = over > 0 ? stdout.slice(0, this.capChars) : stdout
    const lost = over + this.dropped
    const marker = `\n[output truncated by the host: ${lost} more characters not shown (cap ${this.capChars} characters per block)]\n`
    return { ...outcome, stdout: kept + marker }
  }
}
