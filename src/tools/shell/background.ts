import type { ChildProcess } from 'node:child_process'
import { isRunning } from '../../util/proc.js'
import { Ring } from '../proc/bounded.js'
import { hostSpawn, terminate } from '../proc/spawn.js'
import type { Json, Resource, SpawnHook, ToolProcess } from '../types.js'
import { shellVars } from './env.js'

export const RING_BYTES = 256 * 1024
const STOP_GRACE_MS = 2000
// How long a stopped shell's processes get to clean up after SIGTERM.
const STOP_TERM_MS = 1000

// util-linux `script` gives the command a real pseudo-terminal (so programs
// line-buffer and show prompts as for a person) and relays our stdin to it.
// The command reaches bash through the environment, never through quoting.
const PTY_COMMAND = 'stty cols 160 rows 48 2>/dev/null; exec bash -lc "$VIS_SHELL_CMD"'

export class BackgroundShell implements Resource {
  readonly kind = 'shell'
  readonly ring = new Ring(RING_BYTES)
  readonly startedAt = Date.now()
  exit: number | null = null
  signal: string | null = null
  readonly exited: Promise<void>
  private readonly child: ChildProcess
  private waiters: (() => void)[] = []

  // Starts `cmd` under a pseudo-terminal through the session's spawner (its
  // jail, when it has one).
  static async start(
    id: string,
    cmd: string,
    cwd: string,
    spawn: SpawnHook = hostSpawn,
  ): Promise<BackgroundShell> {
    const proc = await spawn('script', ['-q', '-f', '-e', '-E', 'never', '-c', PTY_COMMAND, '/dev/null'], {
      cwd,
      env: shellVars({ VIS_SHELL_CMD: cmd, SHELL: '/bin/bash', TERM: 'xterm-256color' }),
      stdin: 'pipe',
      pty: true,
    })
    return new BackgroundShell(id, cmd, cwd, proc)
  }

  private constructor(
    readonly id: string,
    readonly cmd: string,
    readonly cwd: string,
    private readonly proc: ToolProcess,
  ) {
    this.child = proc.child
    const take = (d: Buffer) => {
      this.ring.push(d)
      this.wake()
    }
    this.child.stdout?.on('data', take)
    this.child.stderr?.on('data', take)
    this.child.stdin?.on('error', () => {})
    this.exited = new Promise<void>((resolve) => {
      this.child.on('error', (err) => {
        this.ring.push(Buffer.from(`could not start the shell: ${err.message}\n`))
        this.exit = 127
        resolve()
      })
      this.child.on('close', (code, signal) => {
        this.exit = code
        this.signal = signal
        resolve()
      })
    }).then(() => this.wake())
  }

  get pid(): number | undefined {
    return this.child.pid
  }

  get running(): boolean {
    return (
      this.child.exitCode === null &&
      this.child.signalCode === null &&
      this.exit === null &&
      this.pid !== undefined
    )
  }

  private wake(): void {
    const w = this.waiters
    this.waiters = []
    for (const f of w) f()
  }

  // Waits until `ms` pass or the process exits, whichever is first.
  async settle(ms: number): Promise<void> {
    if (!this.running || ms <= 0) return
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, ms))])
  }

  send(input: string): void {
    this.child.stdin?.write(input)
  }

  read(since: number | undefined, max: number): { text: string; from: number; dropped: number } {
    const r = this.ring.read(since ?? 0, max)
    return { ...r, text: r.text.replace(/\r\n/g, '\n') }
  }

  describe(): { [key: string]: Json } {
    return {
      cmd: this.cmd,
      cwd: this.cwd,
      pid: this.pid ?? null,
      running: this.running,
      exit: this.exit,
      started_at: new Date(this.startedAt).toISOString(),
      output_bytes: this.ring.total,
    }
  }

  async stop(): Promise<void> {
    if (this.pid === undefined) return
    await terminate(this.proc, STOP_TERM_MS, ['script'])
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, STOP_GRACE_MS))])
    // Anything that escaped the first sweep (forked mid-kill) goes now.
    this.proc.kill()
    this.child.stdin?.destroy()
  }

  // Whether any process of this shell's tree is still alive.
  alive(): boolean {
    return this.pid !== undefined && isRunning(this.pid)
  }
}
