import type { ChildProcess } from 'node:child_process'

// What crosses the wire: plain JSON with string keys.
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

// How a tool wants its process started. `env` holds only the tool's own
// variables: the spawner supplies the base environment (the host's safe
// pass-through, or the jail's), so a jailed process never sees host values.
export interface ToolSpawnOptions {
  cwd: string
  env: Record<string, string>
  // 'pipe' when the tool types into the process (background shells).
  stdin: 'pipe' | 'ignore'
  // The process allocates a pseudo-terminal (`script`): a jail must give it
  // a private devpts instance.
  pty?: boolean
}

// A started process tree. stdout and stderr are always pipes.
export interface ToolProcess {
  child: ChildProcess
  // SIGKILL for everything the process started, daemons that left its
  // session included.
  kill(): void
  // Whether it runs inside the session's jail.
  jailed: boolean
  // How the command itself ended, when the spawner can tell better than the exit code of
  // the process it started (a jail's layers turn a signal into 128+N). Settles once that
  // process is gone; undefined when no report came.
  status?: Promise<ExitStatus | undefined>
}

export interface ExitStatus {
  exit: number | null
  signal: string | null
}

// Runs a process for a tool. The default runs it on the host in its own
// session and process group; a confined session supplies one that starts it
// inside a jail built from the session's policy, so children inherit it.
export type SpawnHook = (
  command: string,
  args: readonly string[],
  options: ToolSpawnOptions,
) => Promise<ToolProcess>

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
  // Stops the running block's clocks while the tool waits on something the block's timeout
  // should not count (a child turn: src/agent/sub-loop.ts), at most `capMs`; call what it
  // returns when the wait is over.
  holdDeadline?: (capMs?: number) => () => void
}

export interface Tool {
  name: string
  doc: string
  // Python-style, as the model sees it, e.g. "(path, n=None, /)".
  signature: string
  // Positional arguments; keyword arguments arrive folded into one trailing object.
  run(args: unknown[], ctx: ToolContext): Promise<Json>
  // It makes files in the roots grow: refused while the session is past its disk budget.
  writes?: boolean
}
