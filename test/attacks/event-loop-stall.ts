import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

// The longest the host's event loop went without running a 10 ms timer while `work` ran: how
// long a host-side computation the sandbox caused stopped every other session.
export async function worstStall<T>(work: () => Promise<T>): Promise<{ result: T; worst: number }> {
  let last = performance.now()
  let worst = 0
  const tick = setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last)
    last = now
  }, 10)
  try {
    const result = await work()
    return { result, worst }
  } finally {
    clearInterval(tick)
  }
}

// A fresh engine and session over a vis home and root of their own (removed afterwards), for
// the attacks that measure what a sandbox's files make the host's event loop do.
export async function inStallSession(
  tag: string,
  body: (engine: Engine, session: { id: string }) => Promise<void>,
): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), `vis-attack-${tag}-home-`))
  const root = mkdtempSync(join(tmpdir(), `vis-attack-${tag}-root-`))
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    await body(engine, await engine.createSession({ roots: [root] }))
  } finally {
    await engine.close()
    for (const d of [home, root]) rmSync(d, { recursive: true, force: true })
  }
}
