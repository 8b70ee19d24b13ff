import { type ModelReply, type ToolCall, zeroUsage } from './types.js'

// A reply as its stream arrives: text (handed on as it comes), tool calls by their stream index
// with their argument fragments concatenated in order, usage, the reply id and stop reason.
export class ReplyBuilder {
  text = ''
  id: string | null = null
  stop: string | null = null
  readonly usage = zeroUsage()
  private readonly calls = new Map<number, ToolCall>()

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
    if (part.id) cur.id = part.id
    if (part.name && part.name !== cur.name) cur.name += part.name
    if (part.arguments) cur.arguments += part.arguments
    this.calls.set(index, cur)
  }

  // The stream index of a Chat fragment that came without one (some OpenAI-compatible servers
  // leave `index` out): a new id starts the next call, no id continues the last one.
  indexOf(id: string | undefined): number {
    const known = [...this.calls.entries()]
    const same = id ? known.find(([, c]) => c.id === id) : undefined
    if (same) return same[0]
    if (!id && known.length > 0) return Math.max(...known.map(([i]) => i))
    return known.length === 0 ? 0 : Math.max(...known.map(([i]) => i)) + 1
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
