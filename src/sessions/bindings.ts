import type { z } from 'zod'
import type { Tool } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { assertCrossable } from './crossing.js'
import type { BoundTool, ToolGate, ToolTable } from './tool-table.js'

export type BindOptions = {
  doc?: string
  signature?: string
  args?: z.ZodTypeAny
  // 'required': every call waits for approval (src/agent/approvals.ts).
  approval?: 'required'
}

type MethodSpec = { name: string; doc: string; signature: string }

// How the bindings reach the session's current worker (Session implements it: a replacement
// worker under way is waited for, and what is sent is remembered for the next replacement).
export type BindingPort = {
  install(spec: Record<string, unknown>): Promise<unknown>
  remove(name: string): Promise<unknown>
  // The spec a warm worker was started with under this name (the default tools), taken once.
  takePreinstalled(name: string): string | undefined
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/

// What a session binds into its worker: host tools, methods published through a capability
// namespace, and JSON data. Each binding goes into the tool table (which dispatches the
// guest's calls on the host) and is sent to the guest; a call does not have to be awaited, as
// the next block waits for every send made before it (takePending) and reports its failure.
export class SessionBindings {
  private installs: Promise<void>[] = []
  private readonly namespaces = new Map<string, Map<string, MethodSpec>>()

  constructor(
    private readonly sessionId: string,
    private readonly tools: ToolTable,
    private readonly port: BindingPort,
  ) {}

  // A host function as a tool the guest calls by `name`. The function receives the positional
  // arguments, then the tool context (abort signal, roots, resources).
  bind(name: string, fn: (...args: any[]) => unknown, opts: BindOptions = {}): Promise<void> {
    return this.bindTool({
      name,
      doc: opts.doc ?? '',
      signature: opts.signature ?? '(*args)',
      args: opts.args,
      ...(opts.approval ? { approval: opts.approval } : {}),
      run: (args, ctx) => fn(...args, ctx),
    })
  }

  bindTool(tool: BoundTool | Tool): Promise<void> {
    const bound: BoundTool = tool
    if (!TOOL_NAME.test(bound.name)) {
      throw new VisError(
        'tool.bad-name',
        `tool name ${JSON.stringify(bound.name)} is not a Python identifier`,
        {
          sessionId: this.sessionId,
        },
      )
    }
    this.tools.set(bound)
    const spec = { name: bound.name, doc: bound.doc, signature: bound.signature }
    // A warm worker may already carry this exact spec (the default tools).
    if (this.port.takePreinstalled(bound.name) === JSON.stringify(spec)) return Promise.resolve()
    return this.track(this.port.install(spec))
  }

  unbind(name: string): Promise<void> {
    this.tools.delete(name)
    return this.track(this.port.remove(name))
  }

  // Host data that crosses as JSON; a value that cannot is refused with its key path.
  setData(name: string, value: unknown): Promise<void> {
    assertCrossable(value, `binding ${name}`)
    return this.track(this.port.install({ name, value: value ?? null, kind: 'data' }))
  }

  // The seed's setPythonBinding: a function becomes a host tool; `ns.method` publishes one
  // method through the capability namespace `ns`; anything else crosses as JSON data.
  setBinding(name: string, value: unknown, opts: BindOptions = {}): Promise<void> {
    if (typeof value !== 'function') return this.setData(name, value)
    const fn = value as (...args: any[]) => unknown
    const dot = name.indexOf('.')
    if (dot < 0) return this.bind(name, fn, opts)
    const ns = name.slice(0, dot)
    const method = name.slice(dot + 1)
    if (!IDENTIFIER.test(ns) || !IDENTIFIER.test(method)) {
      throw new VisError('tool.bad-name', `binding ${JSON.stringify(name)} is not namespace.method`, {
        sessionId: this.sessionId,
      })
    }
    const signature = opts.signature ?? '(*args)'
    this.tools.set({
      name,
      doc: opts.doc ?? '',
      signature,
      args: opts.args,
      run: (args, ctx) => fn(...args, ctx),
    })
    const methods = this.namespaces.get(ns) ?? new Map<string, MethodSpec>()
    methods.set(method, { name: method, doc: opts.doc ?? '', signature })
    this.namespaces.set(ns, methods)
    // The guest replaces the whole namespace object, so every method is sent again.
    return this.track(this.port.install({ name: ns, kind: 'namespace', methods: [...methods.values()] }))
  }

  names(): string[] {
    return this.tools.names()
  }

  // What the model is told about each bound tool (the agent's prompt).
  specs(): Array<Pick<BoundTool, 'name' | 'doc' | 'signature' | 'approval'>> {
    return this.tools.names().map((n) => {
      const t = this.tools.get(n)!
      return { name: t.name, doc: t.doc, signature: t.signature, approval: t.approval }
    })
  }

  // Every tool call passes through `gate` (approvals, the journal); undefined removes it.
  setGate(gate: ToolGate | undefined): void {
    this.tools.gate = gate
  }

  // Sends made so far, handed to the next block to wait for (and forgotten here).
  takePending(): Promise<void>[] {
    const pending = this.installs
    this.installs = []
    return pending
  }

  // A send the next block waits for. The returned promise is marked handled, so a caller that
  // does not await it never causes an unhandled rejection.
  track(p: Promise<unknown>): Promise<void> {
    const done = p.then(() => undefined)
    this.installs.push(done)
    done.catch(() => undefined)
    return done
  }
}
