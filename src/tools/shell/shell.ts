import { constants as C } from 'node:fs'
import { z } from 'zod'
import { VisError } from '../../util/errors.js'
import { badArgs, parseArgs, splitArgs } from '../args.js'
import { O_PATH, type PathGuard } from '../fs/paths.js'
import { runBounded } from '../proc/run.js'
import type { Tool, ToolContext } from '../types.js'
import { BackgroundShell } from './background.js'
import { shellVars } from './env.js'

const SIGNATURE =
  "(cmd=None, /, *, op='run', id=None, timeout_secs=120, cwd=None, input=None, since=None, tail_bytes=16384, wait_secs=0.5)"

const Id = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'ids are 1-64 letters, digits, _ . -')
const TailBytes = z
  .number()
  .int()
  .min(1)
  .max(256 * 1024)
  .default(16 * 1024)
const WaitSecs = z.number().min(0).max(30).default(0.5)
const Run = z
  .object({
    op: z.literal('run'),
    cmd: z.string().min(1),
    timeout_secs: z.number().positive().max(3600).default(120),
    cwd: z.string().min(1).optional(),
  })
  .strict()
const Start = z
  .object({
    op: z.literal('start'),
    cmd: z.string().min(1),
    id: Id,
    cwd: z.string().min(1).optional(),
    wait_secs: WaitSecs,
  })
  .strict()
const Logs = z
  .object({
    op: z.literal('logs'),
    id: Id,
    since: z.number().int().min(0).optional(),
    tail_bytes: TailBytes,
  })
  .strict()
const Send = z
  .object({
    op: z.literal('send'),
    id: Id,
    input: z.string(),
    wait_secs: WaitSecs,
    tail_bytes: TailBytes,
  })
  .strict()
const Stop = z
  .object({
    op: z.literal('stop'),
    id: Id,
    tail_bytes: TailBytes,
  })
  .strict()
const Op = z.discriminatedUnion('op', [Run, Start, Logs, Send, Stop])

export type ShellResult = {
  op: string
  id: string | null
  cmd: string | null
  cwd: string | null
  running: boolean
  exit: number | null
  signal: string | null
  stdout: string
  stderr: string
  duration_ms: number
  timed_out: boolean
  truncated: boolean
  cursor: number | null
}

export const shellDoc = `Run bash (a login shell) in the workspace, inside the session's sandbox: only the session's roots are visible (read-write), python3 is the session's Python, the network is what the session allows. shell(cmd) waits for it (timeout_secs, default 120) and returns its output; huge streams keep their start and end. shell(cmd, id="dev") starts it in the background under a pseudo-terminal; then shell(op="logs", id="dev") reads its recent output ('since' = an earlier 'cursor' gives only what came after), shell(op="send", id="dev", input="q\\n") types into it, shell(op="stop", id="dev") kills it and everything it started. Every call returns {op, id, cmd, cwd, running, exit, signal, stdout, stderr, duration_ms, timed_out, truncated, cursor}.`

let runSeq = 0

export function shellTool(guard: PathGuard): Tool {
  return {
    name: 'shell',
    doc: shellDoc,
    signature: SIGNATURE,
    async run(args, ctx) {
      const { positional, kwargs } = splitArgs(args)
      if (positional.length > 1)
        throw badArgs('shell', SIGNATURE, 'takes one positional argument, the command')
      if (positional.length === 1 && 'cmd' in kwargs) throw badArgs('shell', SIGNATURE, "got 'cmd' twice")
      const merged: Record<string, unknown> = { ...kwargs }
      if (positional.length === 1) merged.cmd = positional[0]
      merged.op ??= merged.id !== undefined && merged.cmd !== undefined ? 'start' : 'run'
      const a = parseArgs('shell', SIGNATURE, Op, merged)
      switch (a.op) {
        case 'run':
          return runOp(guard, a, ctx)
        case 'start':
          return startOp(guard, a, ctx)
        case 'logs':
          return logsOp(a, ctx)
        case 'send':
          return sendOp(a, ctx)
        case 'stop':
          return stopOp(a, ctx)
      }
    },
  }
}

async function workdir(guard: PathGuard, cwd: string | undefined): Promise<string> {
  if (cwd === undefined) return (await guard.realRoots())[0]!
  const { fh, real } = await guard.open(cwd, 'shell', O_PATH | C.O_DIRECTORY)
  await fh.close()
  return real
}

async function runOp(guard: PathGuard, a: z.infer<typeof Run>, ctx: ToolContext): Promise<ShellResult> {
  const cwd = await workdir(guard, a.cwd)
  // While it runs, the command is a session resource too, so disposal kills it.
  const rid = `run-${++runSeq}`
  let kill: (() => void) | undefined
  ctx.resources.add({
    id: rid,
    kind: 'shell-run',
    describe: () => ({ cmd: a.cmd, cwd, running: true }),
    stop: async () => kill?.(),
  })
  try {
    const r = await runBounded('bash', ['-lc', a.cmd], {
      cwd,
      env: shellVars(),
      timeoutMs: a.timeout_secs * 1000,
      signal: ctx.signal,
      spawn: ctx.spawn,
      onStart: (k) => {
        kill = k
      },
    })
    return { op: 'run', id: null, cmd: a.cmd, cwd, running: false, ...r, cursor: null }
  } finally {
    await ctx.resources.stop(rid).catch(() => {})
  }
}

function background(id: string, ctx: ToolContext): BackgroundShell {
  const r = ctx.resources.get(id)
  if (!(r instanceof BackgroundShell)) {
    const ids = ctx.resources
      .list()
      .filter((x) => x.kind === 'shell')
      .map((x) => x.id)
    throw new VisError(
      'tool.not-found',
      `shell: no background shell '${id}'${ids.length ? `; running: ${ids.join(', ')}` : '; start one with shell(cmd, id=...)'}`,
      { sessionId: ctx.sessionId, op: 'shell', id },
    )
  }
  return r
}

function view(op: string, sh: BackgroundShell, text: string, dropped: number): ShellResult {
  return {
    op,
    id: sh.id,
    cmd: sh.cmd,
    cwd: sh.cwd,
    running: sh.running,
    exit: sh.exit,
    signal: sh.signal,
    stdout: text,
    stderr: '',
    duration_ms: Date.now() - sh.startedAt,
    timed_out: false,
    truncated: dropped > 0,
    cursor: sh.ring.total,
  }
}

async function startOp(guard: PathGuard, a: z.infer<typeof Start>, ctx: ToolContext): Promise<ShellResult> {
  const cwd = await workdir(guard, a.cwd)
  const old = ctx.resources.get(a.id)
  // An exited shell stays readable until stopped; starting anew replaces it.
  if (old instanceof BackgroundShell && !old.running) await ctx.resources.stop(a.id)
  else if (old) {
    throw new VisError(
      'tool.resource-exists',
      `shell: '${a.id}' is still running; stop it first or pick another id`,
      {
        sessionId: ctx.sessionId,
        op: 'shell',
        id: a.id,
      },
    )
  }
  const sh = await BackgroundShell.start(a.id, a.cmd, cwd, ctx.spawn)
  ctx.resources.add(sh)
  await sh.settle(a.wait_secs * 1000)
  const r = sh.read(0, 16 * 1024)
  return view('start', sh, r.text, r.dropped)
}

async function logsOp(a: z.infer<typeof Logs>, ctx: ToolContext): Promise<ShellResult> {
  const sh = background(a.id, ctx)
  const r = sh.read(a.since, a.tail_bytes)
  return view('logs', sh, r.text, r.dropped)
}

async function sendOp(a: z.infer<typeof Send>, ctx: ToolContext): Promise<ShellResult> {
  const sh = background(a.id, ctx)
  if (!sh.running) {
    throw new VisError(
      'tool.not-running',
      `shell: '${a.id}' has exited (exit ${sh.exit}); read its logs or stop it`,
      {
        op: 'shell',
        id: a.id,
      },
    )
  }
  const before = sh.ring.total
  sh.send(a.input)
  await sh.settle(a.wait_secs * 1000)
  const r = sh.read(before, a.tail_bytes)
  return view('send', sh, r.text, r.dropped)
}

async function stopOp(a: z.infer<typeof Stop>, ctx: ToolContext): Promise<ShellResult> {
  const sh = background(a.id, ctx)
  await ctx.resources.stop(a.id)
  const r = sh.read(undefined, a.tail_bytes)
  return view('stop', sh, r.text, r.dropped)
}
