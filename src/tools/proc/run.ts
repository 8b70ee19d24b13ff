import { spawn as nodeSpawn } from 'node:child_process'
import { VisError } from '../../util/errors.js'
import type { SpawnHook } from '../types.js'
import { HeadTail } from './bounded.js'
import { killTree, newTreeToken, TREE_MARK, terminateTree } from './tree.js'

export const STREAM_HEAD = 16 * 1024
export const STREAM_TAIL = 16 * 1024
// After the main process exits, how long leftover holders of its pipes may keep writing.
const DRAIN_MS = 200

export interface RunOptions {
  cwd: string
  env: NodeJS.ProcessEnv
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

// Runs a command to completion in its own session, bounding both streams at
// read time. On timeout, cancellation or exit, whatever the command left
// running (background jobs, daemons) is killed with it.
export function runBounded(command: string, args: readonly string[], o: RunOptions): Promise<RunResult> {
  const started = performance.now()
  const out = new HeadTail(o.head ?? STREAM_HEAD, o.tail ?? STREAM_TAIL)
  const err = new HeadTail(o.head ?? STREAM_HEAD, o.tail ?? STREAM_TAIL)
  return new Promise((resolve, reject) => {
    if (o.signal.aborted) {
      reject(new VisError('tool.aborted', `${command}: the call was cancelled`, {}))
      return
    }
    const token = newTreeToken()
    const child = (o.spawn ?? nodeSpawn)(command, args, {
      cwd: o.cwd,
      env: { ...o.env, [TREE_MARK]: token },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let timedOut = false
    let aborted = false
    let finished = false
    let exit: number | null = null
    let sig: string | null = null
    const pid = child.pid
    const kill = () => {
      if (pid !== undefined) killTree(pid, token)
    }
    if (pid !== undefined) o.onStart?.(kill)
    const timer = setTimeout(() => {
      timedOut = true
      if (pid !== undefined) void terminateTree(pid, token)
    }, o.timeoutMs)
    const onAbort = () => {
      aborted = true
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
      if (aborted) {
        reject(new VisError('tool.aborted', `${command}: the call was cancelled`, {}))
        return
      }
      resolve({
        stdout: out.text(),
        stderr: err.text(),
        exit,
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
      reject(new VisError('tool.spawn', `could not start ${command}: ${e.message}`, {}))
    })
    child.on('exit', (code, signal) => {
      exit = code
      sig = signal
      // Pipes still held by a backgrounded grandchild get a moment, then are cut.
      drain = setTimeout(finish, DRAIN_MS)
    })
    child.on('close', finish)
  })
}
