// What the host tells the guest runtime at install time (vis_guest.api.install_runtime).
// PROCESS_SURFACE is the one canonical refusal for spawning processes from Python: the guest
// raises it from subprocess, os.system, os.popen, os.exec*/spawn*/fork and asyncio's
// subprocess functions, and doc('shell') answers with it when there is no shell tool.
export const PROCESS_SURFACE = {
  shellOn: [
    'processes are never spawned from Python in this sandbox; run commands with the shell tool:',
    '    r = shell("ls -la")',
    '    print(r["stdout"])',
  ].join('\n'),
  shellOff:
    "processes cannot be spawned in this session: Python's process APIs and the shell tool are both " +
    'closed. A command the task needs can be exposed as a tool by a trusted extension ' +
    '(~/.vis/extensions/*.py or <project>/.vis/extensions/*.py).',
} as const

// Tools named in sandbox-denial hints ("use ... instead").
export const DEFAULT_TOOL_HINTS = {
  files: 'the file tools (cat(path), ls(path), grep(pattern, path), patch(...)) on paths inside the roots',
  network: "a host tool that fetches (see apropos('http'))",
} as const

export type GuestRuntimeOptions = {
  // Files closed here during a block are attached to its outcome (VIS_OUTBOX in the guest).
  outbox?: string
  // Bytes of block output kept in the outcome (default 1 MiB).
  stdoutCap?: number
  toolHints?: Partial<Record<'files' | 'network' | 'serve', string>>
}

// The install_runtime config, minus `policy` (the worker adds the policy it was spawned with).
export function guestRuntimeConfig(opts: GuestRuntimeOptions = {}): Record<string, unknown> {
  const config: Record<string, unknown> = {
    process_surface: { shell_on: PROCESS_SURFACE.shellOn, shell_off: PROCESS_SURFACE.shellOff },
    tool_hints: { ...DEFAULT_TOOL_HINTS, ...opts.toolHints },
  }
  if (opts.outbox !== undefined) config.outbox = opts.outbox
  if (opts.stdoutCap !== undefined) config.stdout_cap = opts.stdoutCap
  return config
}
