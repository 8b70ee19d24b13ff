import type { ChildProcess, SpawnOptions } from 'node:child_process'

// What crosses the wire: plain JSON with string keys.
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

// Runs a process for a tool. The default is node's spawn; a session that is
// confined supplies one that starts the process inside its jail. Tools always
// ask for `detached: true` so each started tree has its own session and
// process group that can be killed as a whole.
export type SpawnHook = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess

// Something long-lived a session owns (a background shell...). It is listed
// in the session's context and stopped by id or when the session is disposed.
export interface Resource {
  readonly id: string
  readonly kind: string
  describe(): { [key: string]: Json }
  stop(): Promise<void>
}

export interface ResourceRegistry {
  add(resource: Resource): void
  get(id: string): Resource | undefined
  list(): { [key: string]: Json }[]
  // Stops and forgets one resource; false when there was none with that id.
  stop(id: string): Promise<boolean>
  // Stops everything; the registry refuses new resources afterwards.
  dispose(): Promise<void>
}

export interface ToolContext {
  sessionId: string
  // Absolute directories the tools may touch; the first is the workspace.
  roots: string[]
  signal: AbortSignal
  spawn?: SpawnHook
  resources: ResourceRegistry
}

export interface Tool {
  name: string
  doc: string
  // Python-style, as the model sees it, e.g. "(path, n=None, /)".
  signature: string
  // Positional arguments; keyword arguments arrive folded into one trailing object.
  run(args: unknown[], ctx: ToolContext): Promise<Json>
}
