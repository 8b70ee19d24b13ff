// One real session per test file with host tools that log each call ("name:arg") and count
// how many run at once, for the forms-* tests: each test proves how often each tool ran and
// whether calls sent together overlapped. Hooks are registered by the call (node:test).
import { after, before, beforeEach } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import type { ToolContext } from '../../src/tools/types.js'
import { python, tempHome } from '../sessions/helpers.js'

export type Logged = {
  readonly session: Session
  // Every call since the test began, as "name:arg".
  readonly log: string[]
  // The most calls that ran at once since the test began.
  readonly peak: number
}

export function loggedSession(prefix: string, slowMs: number): Logged {
  const { home, root } = tempHome(prefix)
  let rt: Runtime
  let s: Session
  let log: string[] = []
  let active = 0
  let peak = 0
  // A tool that takes slowMs (long enough that calls sent together overlap, even on a
  // loaded machine) and returns what `answer` makes of its argument.
  const slow =
    (name: string, answer: (q: string) => unknown) =>
    async (q: string): Promise<unknown> => {
      log.push(`${name}:${q}`)
      active++
      peak = Math.max(peak, active)
      await new Promise((r) => setTimeout(r, slowMs))
      active--
      return answer(q)
    }
  before(async () => {
    rt = await createRuntime({ home, python, pool: { size: 0 }, defaultTools: false })
    s = await rt.createSession({ roots: [root] })
    const read = (path: string) => {
      log.push(`read:${path}`)
      return { path, text: `text of ${path}` }
    }
    const fail = (where: string) => {
      log.push(`fail:${where}`)
      throw new Error(`boom in ${where}`)
    }
    // Answers only when its call is cancelled (the block's interrupt aborts it).
    const hang = (...a: unknown[]) => {
      log.push('hang')
      const ctx = a.at(-1) as ToolContext
      return new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(null)))
    }
    await s.bind('read', read, { signature: '(path)' })
    await s.bind(
      'size',
      slow('size', (q) => q.length),
      { signature: '(path)' },
    )
    await s.bind(
      'slow',
      slow('slow', (q) => q.toUpperCase()),
      { signature: '(q)' },
    )
    await s.bind('fail', fail, { signature: '(where)' })
    await s.bind('hang', hang, { signature: '()' })
  })
  after(async () => {
    await s.dispose()
    await rt.close()
  })
  beforeEach(() => {
    log = []
    peak = 0
  })
  return {
    get session() {
      return s
    },
    get log() {
      return log
    },
    get peak() {
      return peak
    },
  }
}
