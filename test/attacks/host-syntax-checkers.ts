// The set-up the attacks on patch's host syntax check share: an engine session on a fresh root, and
// a watch over the host's checker processes (/proc) while a block runs.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

// A session on a fresh root of an engine over a fresh home (default limits, no extensions).
export async function withSession(tag: string, use: (engine: Engine, sessionId: string) => Promise<void>) {
  const home = mkdtempSync(join(tmpdir(), `vis-attack-${tag}-home-`))
  const root = mkdtempSync(join(tmpdir(), `vis-attack-${tag}-root-`))
  made.push(home, root)
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root] })
    await use(engine, s.id)
  } finally {
    await engine.close()
  }
}

// A host process running the syntax checker (Python, after prlimit's exec) on a file whose path
// matches: that path and the process's /proc status and limits.
export type Checker = { file: string; status: string; limits: string }

export function syntaxCheckers(file: RegExp): Checker[] {
  const out: Checker[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')
      if (!cmd.some((a) => a.includes('compile(sys.stdin.buffer.read()'))) continue
      // prlimit's own process (before it execs Python) has not set the limit yet.
      if (/prlimit$/.test(cmd[0] ?? '')) continue
      const path = cmd.find((a) => file.test(a))
      if (!path) continue
      const status = readFileSync(`/proc/${name}/status`, 'utf8')
      const limits = readFileSync(`/proc/${name}/limits`, 'utf8')
      out.push({ file: path, status, limits })
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out
}

// A memory figure of /proc/<pid>/status in KiB (VmRSS now, VmHWM the peak), 0 when absent.
export function statusKiB(status: string, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)
  return m ? Number(m[1]) : 0
}

// Calls `sample` every `everyMs` while `run` runs; stops once it settles.
export async function sampledWhile<T>(
  sample: () => void,
  everyMs: number,
  run: () => Promise<T>,
): Promise<T> {
  let running = true
  const watcher = (async () => {
    while (running) {
      sample()
      await new Promise((res) => setTimeout(res, everyMs))
    }
  })()
  try {
    return await run()
  } finally {
    running = false
    await watcher
  }
}
