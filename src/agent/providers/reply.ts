import { type ModelReply, type ToolCall, zeroUsage } from './types.js'

// A reply arrives as fast as the model's server sends it: thousands of chunks in one read are
// handed on as one chain of promise jobs, during which no other session's work runs (a 240 KB
// reply stopped the host for seconds: thirteenth outsider pass). Each provider's stream loop
// awaits the returned function per chunk: past 10 ms of work, the event loop gets a turn.
export function breather(): () => Promise<void> {
  let last = performance.now()
  return async () => {
    if (performance.now() - last < 10) return
    await new Promise((resolve) => setImmediate(resolve))
    last = performance.now()
  }
}

// A reply as its stream arrives: text (handed on as it comes), tool calls by their stream index
// with their argument fragments concatenated in order, usage, the reply id and stop reason.
export class ReplyBuilder {
  text = ''
  id: string | null = null
  stop: string | null = null
  readonly usage = zeroUsage()
  private readonly calls = new Map<number, ToolCall>()
  private lastIndex = -1
  private readonly indexById = new Map<string, number>()

  constructor(private readonly onDelta: (text: string) => void) {}

  addText(t: string): void {
    this.text += t
    this.onDelta(t)
  }

  // A call's parts as they come; a part that is absent leaves what is known. A name is sent once
  // (OpenAI) or again with every fragment (some OpenAI-compatible servers): the same name again
  // is not appended.
  addCall(index: number, part: { id?: string; name?: string; arguments?: string }): void {
    const cur = this.calls.get(index) ?? { id: '', name: '', arguments: '' }
    if (part.id) {
      cur.id = part.id
      if (!this.indexById.has(part.id)) this.indexById.set(part.id, index)
    }
    if (part.name && part.name !== cur.name) cur.name += part.name
    if (part.arguments) cur.arguments += part.arguments
    this.calls.set(index, cur)
    if (index > this.lastIndex) this.lastIndex = index
  }

  // The stream index of a Chat fragment that came without one (some OpenAI-compatible servers
  // leave `index` out): a new id starts the next call, no id continues the last one.
  // Calls are found by id and the highest index is kept, not recomputed: a reply of many calls
  // costs no more per fragment than a reply of one.
  indexOf(id: string | undefined): number {
    if (this.calls.size === 0) return 0
    const same = id ? this.indexById.get(id) : undefined
    if (same !== undefined) return same
    return id ? this.lastIndex + 1 : this.lastIndex
  }

  hasCall(index: number): boolean {
    return this.calls.has(index)
  }

  // A call without an id gets one from its index; one without arguments has `{}`.
  finish(requestId: string | null | undefined): ModelReply {
    const toolCalls = [...this.calls.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([i, c]) => ({
        id: c.id || `call_${i}`,
        name: c.name,
        arguments: c.arguments === '' ? '{}' : c.arguments,
      }))
    return { text: this.text, toolCalls, usage: this.usage, requestId: requestId ?? this.id, stop: this.stop }
  }
}
