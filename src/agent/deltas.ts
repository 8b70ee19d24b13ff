import type { JsonValue } from '../persistence/json.js'

// Model text arrives a few characters at a time; the session's event log (SQLite, SSE) gets it
// in batches so a long reply costs a handful of commits, not one per token.
export class ModelDeltaBatcher {
  private readonly pending = new Map<
    string,
    { turnId: string | null; iterationId: string; text: string; timer: NodeJS.Timeout }
  >()

  constructor(
    private readonly write: (sessionId: string, data: JsonValue) => void,
    private readonly flushMs = 50,
  ) {}

  add(sessionId: string, turnId: string | null, iterationId: string, text: string): void {
    const cur = this.pending.get(sessionId)
    if (cur && cur.iterationId === iterationId) {
      cur.text += text
      return
    }
    if (cur) this.flush(sessionId)
    const timer = setTimeout(() => this.flush(sessionId), this.flushMs)
    timer.unref()
    this.pending.set(sessionId, { turnId, iterationId, text, timer })
  }

  flush(sessionId: string): void {
    const cur = this.pending.get(sessionId)
    if (!cur) return
    this.pending.delete(sessionId)
    clearTimeout(cur.timer)
    this.write(sessionId, { turn_id: cur.turnId, iteration_id: cur.iterationId, text: cur.text })
  }
}
