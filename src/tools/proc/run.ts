import { VisError } from '../../util/errors.js'
import type { ExitStatus, SpawnHook, ToolProcess } from '../types.js'
import { HeadTail } from './bounded.js'
import { hostSpawn, terminate } from './spawn.js'

export const STREAM_HEAD = 16 * 1024
export const STREAM_TAIL = 16 * 1024
// After the main process exits, how long leftover holders of its pipes may keep writing.
const DRAIN_MS = 200

export interface RunOptions {
  cwd: string
  // The tool's own variables; the spawner adds the base environment.
  env: Record<string, string>
  timeoutMs: number
  signal: AbortSignal
  spawn?: SpawnHook
  head?: number
  tail?: number
  // Receives a function that kills everything the command started.
  onStart?: (kill: () => void) => void
}

export interface RunResult {
  stdout: string
  stderr: string
  exit: number | null
  signal: string | null
  duration_ms: number
  timed_out: boolean
  truncated: boolean
}

const aborted = (command: string) => new VisError('tool.aborted', `${command}: the call was cancelled`, {})

// Runs a command to completion in its own process tree (a jail when the
// session has one), bounding both streams at read time. On timeout,
// cancellation or exit, whatever the command left running (background jobs,
// daemons) is killed with it.
export async function runBounded(
  command: string,
  args: readonly string[],
  o: RunOptions,
): Promise<RunResult> {
  const started = performance.now()
  if (o.signal.aborted) throw aborted(command)
  let proc: ToolProcess
  try {
    proc = await (o.spawn ?? hostSpawn)(command, args, { cwd: o.cwd, env: o.env, stdin: 'ignore' })
  } catch (e) {
    if (e instanceof VisError) throw e
    throw new VisError('tool.spawn', `could not start ${command}: ${(e as Error).message}`, {})
  }
  // Cancelled while the jail was being built: nothing of it may survive.
  if (o.signal.aborted) {
    proc.kill()
    throw aborted(command)
  }
  const { child } = proc
  const out = new HeadTail(o.head ?? STREAM_HEAD, o.tail ?? STREAM_TAIL)
  const err = new HeadTail(o.head ?? STREAM_HEAD, o.tail ?? STREAM_TAIL)
  return new Promise((resolve, reject) => {
    let timedOut = false
    let wasAborted = false
    let finished = false
    let exit: number | null = null
    let sig: string | null = null
    const kill = () => proc.kill()
    if (child.pid !== undefined) o.onStart?.(kill)
    const timer = setTimeout(() => {
      timedOut = true
      void terminate(proc)
    }, o.timeoutMs)
    const onAbort = () => {
      wasAborted = true
      kill()
    }
    o.signal.addEventListener('abort', onAbort, { once: true })
    child.stdout?.on('data', (d: Buffer) => out.push(d))
    child.stderr?.on('data', (d: Buffer) => err.push(d))
    let drain: NodeJS.Timeout | undefined
    const finish = () => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      clearTimeout(drain)
      o.signal.removeEventListener('abort', onAbort)
      kill()
      child.stdout?.destroy()
      child.stderr?.destroy()
      if (wasAborted) {
        reject(aborted(command))
        return
      }
      resolve({
        stdout: out.text(),
        stderr: err.text(),
        // Killed on timeout, a command has no exit status of its own, jailed or not.
        exit: timedOut ? null : exit,
        signal: sig,
        duration_ms: Math.round(performance.now() - started),
        timed_out: timedOut,
        truncated: out.dropped > 0 || err.dropped > 0,
      })
    }
    child.on('error', (e) => {
      clearTimeout(timer)
      o.signal.removeEventListener('abort', onAbort)
      finished = true
      kill()
      reject(new VisError('tool.spawn', `could not start ${command}: ${e.message}`, {}))
    })
    // A jail reports how the command itself ended (a signal there reaches us as 128+N);
    // the report is in by the time the jail is gone, but is not waited for much longer.
    let status: Promise<ExitStatus | undefined> | undefined
    child.on('exit', (code, signal) => {
      const late = new Promise<undefined>((r) => setTimeout(() => r(undefined), DRAIN_MS).unref())
      status = Promise.race([proc.status ?? Promise.resolve(undefined), late])
      void status.then((st) => {
        exit = st ? st.exit : code
        sig = st ? st.signal : signal
        // Pipes still held by a backgrounded grandchild get a moment, then are cut.
        if (!finished) drain = setTimeout(finish, DRAIN_MS)
      })
    })
    child.on('close', () => void (status ?? Promise.resolve()).then(finish))
  })
}
