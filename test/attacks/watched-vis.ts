// `vis` run the way a person runs it after an attack, watched from outside: its output so far,
// whether it has exited, and a poll that stops at the first of its exit, a deadline, or what the
// caller watches for (memory, files made). A run still going at the end is the attack's success.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'

const visBin = resolve(import.meta.dirname, '../../bin/vis.js')

export type WatchedVis = {
  pid: number
  output: () => string
  exited: Promise<number | null>
  // Polls every `everyMs` until vis exits, `ms` pass or `stop()` says so; true when vis exited.
  watch: (ms: number, everyMs: number, stop?: () => boolean) => Promise<boolean>
  kill: () => Promise<void>
}

export function watchedVis(args: string[], env: NodeJS.ProcessEnv): WatchedVis {
  const child = spawn(process.execPath, [visBin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (b) => {
    out += b
  })
  child.stderr.on('data', (b) => {
    out += b
  })
  let done = false
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)))
  void exited.then(() => {
    done = true
  })
  return {
    pid: child.pid!,
    output: () => out,
    exited,
    async watch(ms, everyMs, stop) {
      const until = Date.now() + ms
      while (!done && Date.now() < until && !stop?.()) await new Promise((res) => setTimeout(res, everyMs))
      return done
    },
    async kill() {
      child.kill('SIGKILL')
      await exited
    },
  }
}

// The person's `vis ext list --project <project>` with VIS_HOME=home.
export const watchedExtList = (home: string, project: string): WatchedVis =>
  watchedVis(['ext', 'list', '--project', project], { ...process.env, VIS_HOME: home })

// Watches `vis` as `watch` does, and fails the test when it is still running at the end: killed,
// `cleanup` run, then `why()` (what it was doing, measured now) is the failure.
export async function mustAnswer(
  vis: WatchedVis,
  ms: number,
  everyMs: number,
  why: () => string,
  opts: { stop?: () => boolean; cleanup?: () => void } = {},
): Promise<void> {
  if (await vis.watch(ms, everyMs, opts.stop)) return
  await vis.kill()
  opts.cleanup?.()
  assert.fail(why())
}

// What vis said once it answered must match `answer` (the folder did not load, and why).
export async function saidMatching(vis: WatchedVis, answer: RegExp): Promise<void> {
  assert.match(vis.output(), answer, `exit ${await vis.exited}: ${vis.output()}`)
}
