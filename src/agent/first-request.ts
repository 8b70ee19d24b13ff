import { StallWatch } from './providers/failure.js'
import type { ModelReply, Provider } from './providers/types.js'
import { userText } from './transcript.js'

// A turn's first model request, sent before its session has started (issue 32 §2: `vis run`
// asks the model while the worker starts). It is made from a prompt the caller built ahead
// (src/agent/prompt-cache.ts); the turn takes its reply only if its own system prompt and task
// are the same (src/agent/host.ts), else it is aborted and asked again. Text streamed before
// the turn takes it is kept and handed over then, so listeners see every delta.
export class EarlyRequest {
  readonly watch: StallWatch
  readonly reply: Promise<ModelReply>
  private readonly deltas: string[] = []
  private onDelta: ((text: string) => void) | undefined
  private readonly controller = new AbortController()

  constructor(
    readonly provider: Provider,
    readonly system: string,
    readonly prompt: string,
    readonly toolCalling: boolean,
    stallMs: number,
  ) {
    this.watch = new StallWatch(stallMs, this.controller.signal)
    this.reply = provider.complete({
      system,
      messages: [userText(prompt)],
      tools: toolCalling,
      toolChoice: 'auto',
      signal: this.watch.signal,
      onDelta: (text) => {
        this.watch.kick()
        if (this.onDelta) this.onDelta(text)
        else if (text !== '') this.deltas.push(text)
      },
    })
    // Whoever takes it handles its failure; one never taken must not be an unhandled rejection.
    this.reply.catch(() => undefined)
  }

  // The turn takes the request over: what streamed so far, then the rest as it comes.
  take(onDelta: (text: string) => void): Promise<ModelReply> {
    for (const d of this.deltas.splice(0)) onDelta(d)
    this.onDelta = onDelta
    return this.reply
  }

  abort(reason?: unknown): void {
    this.controller.abort(reason ?? new Error('the early request was not used'))
    this.watch.dispose()
  }
}
