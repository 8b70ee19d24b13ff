import type { z } from 'zod'
import type { ToolContext } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { issuesText } from '../util/zod-issues.js'
import type { HostCall } from '../worker/worker.js'
import { assertCrossable } from './crossing.js'

export type BoundTool = {
  name: string
  doc: string
  signature: string
  // Optional schema for the positional argument array; checked before the tool runs.
  args?: z.ZodTypeAny
  run: (args: unknown[], ctx: ToolContext) => unknown | Promise<unknown>
  // 'required': each call waits for a person's (or a policy's) approval through the gate.
  approval?: 'required'
  // 'person': only a person may give that approval, never an auto-policy (`approvals.auto`,
  // `--approve approve`): what a read-only or review session requires (src/engine/mode-gate.ts).
  approvalBy?: 'person'
  // It writes into the roots (the file tools' write, patch...): refused while the session is
  // past its disk budget.
  writes?: boolean
}

// Wraps every tool call (the agent's approval gate and journal, src/agent/gate.ts). Without
// one, a tool that requires approval is refused: nobody could give it.
// `holdDeadline` stops the running block's clocks while the gate waits on a person; call what it
// returns when the wait is over.
export type ToolGate = (
  call: {
    tool: BoundTool
    args: unknown[]
    signal: AbortSignal
    holdDeadline: (capMs?: number) => () => void
  },
  run: () => Promise<unknown>,
) => Promise<unknown>

export const DEFAULT_MAX_CONCURRENT_HOST_CALLS = 16
// Calls waiting for a slot; past it a call is refused at once, so a guest flooding the
// wire with calls cannot grow the host's memory without bound.
export const MAX_QUEUED_HOST_CALLS = 1024

// A session's host tools. Lookups go through a Map, so a guest-chosen name can never
// reach Object.prototype; calls beyond the concurrency limit wait their turn (or their
// abort).
export class ToolTable {
  private readonly tools = new Map<string, BoundTool>()
  private active = 0
  private readonly waiting: Array<() => void> = []
  gate: ToolGate | undefined
  // Checks the disk budget before a tool that writes (Session: DiskBudget.assertWritable).
  beforeWrite: ((op: string) => Promise<void>) | undefined

  constructor(
    private readonly sessionId: string,
    private readonly limit: number = DEFAULT_MAX_CONCURRENT_HOST_CALLS,
    // The running block's deadline hold (Session): a no-op when no block runs.
    private readonly holdDeadline: (capMs?: number) => () => void = () => () => {},
  ) {}

  set(tool: BoundTool): void {
    this.tools.set(tool.name, tool)
  }

  delete(name: string): boolean {
    return this.tools.delete(name)
  }

  has(name: string): boolean {
    return this.tools.has(name)
  }

  get(name: string): BoundTool | undefined {
    return this.tools.get(name)
  }

  names(): string[] {
    return [...this.tools.keys()]
  }

  get activeCalls(): number {
    return this.active
  }

  async dispatch(call: HostCall, base: Omit<ToolContext, 'signal'>): Promise<unknown> {
    const tool = this.tools.get(call.name)
    if (!tool) {
      throw new VisError(
        'tool.unbound',
        `this session never bound a tool named ${JSON.stringify(call.name)}; bound: ${this.names().join(', ') || '(none)'}`,
        { sessionId: this.sessionId, tool: call.name },
      )
    }
    let args = call.args
    if (tool.args) {
      const r = tool.args.safeParse(args)
      if (!r.success) {
        const why = issuesText(r.error, 'args')
        throw new VisError('tool.bad-args', `${tool.name}${tool.signature}: ${why}`, {
          sessionId: this.sessionId,
          tool: tool.name,
        })
      }
      args = r.data as unknown[]
    }
    if (tool.approval === 'required' && !this.gate) {
      throw new VisError(
        'tool.approval-unavailable',
        `${tool.name} needs a person's approval and nothing in this session can ask for it; run it in an agent turn`,
        { sessionId: this.sessionId, tool: tool.name },
      )
    }
    if (tool.writes && this.beforeWrite) await this.beforeWrite(tool.name)
    if (this.gate) {
      const checked = args
      return this.gate({ tool, args: checked, signal: call.signal, holdDeadline: this.holdDeadline }, () =>
        this.invoke(tool, checked, call, base),
      )
    }
    return this.invoke(tool, args, call, base)
  }

  private async invoke(
    tool: BoundTool,
    args: unknown[],
    call: HostCall,
    base: Omit<ToolContext, 'signal'>,
  ): Promise<unknown> {
    await this.acquire(call.signal)
    try {
      const running = Promise.resolve().then(() =>
        tool.run(args, { ...base, signal: call.signal, holdDeadline: this.holdDeadline }),
      )
      // A tool that ignores its signal must not hold the guest: the call fails on abort
      // and whatever the tool returns later is dropped.
      const value = await raceAbort(running, call.signal)
      assertCrossable(value, `the result of ${tool.name}`)
      return value ?? null
    } finally {
      this.release()
    }
  }

  private acquire(signal: AbortSignal): Promise<void> {
    if (this.active < this.limit) {
      this.active++
      return Promise.resolve()
    }
    if (this.waiting.length >= MAX_QUEUED_HOST_CALLS) {
      return Promise.reject(
        new VisError(
          'tool.too-many-calls',
          `${this.active} tool calls are running and ${this.waiting.length} are waiting in this session; await some before starting more`,
          { sessionId: this.sessionId },
        ),
      )
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal.removeEventListener('abort', onAbort)
        this.active++
        resolve()
      }
      const onAbort = () => {
        const i = this.waiting.indexOf(go)
        if (i >= 0) this.waiting.splice(i, 1)
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(go)
    })
  }

  private release(): void {
    this.active--
    this.waiting.shift()?.()
  }
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort)
        resolve(v)
      },
      (e) => {
        signal.removeEventListener('abort', onAbort)
        reject(e)
      },
    )
  })
}
