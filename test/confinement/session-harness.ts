import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import type { AttackCase } from './cases.js'
import { type CaseResult, type Harness, LIMITS, type Verdict } from './harness.js'

const here = dirname(fileURLToPath(import.meta.url))
const PRELUDE = readFileSync(join(here, 'prelude.py'), 'utf8')

// The catalogue through the production path end to end: createRuntime -> createSession
// -> session.runBlock. The worker (node + addon + Python, jailed, seccomp and the audit
// policy installed by `confine`) is what contains each case.
export type SessionRunner = {
  rt: Runtime
  // A session no case touches: it must keep answering whatever the others do.
  sentinel: Session
  run(c: AttackCase): Promise<CaseResult & { session: Session }>
  close(): Promise<void>
}

// Categories whose cases take the worker down or exhaust it run in a fresh session each.
const FRESH = new Set(['bombs', 'signals'])

// A refusal raised out of the block before the case could print its own verdict: the
// audit hook's PermissionError, an OSError from the kernel, or the guest runtime's
// ProcessRefused (its readable text for "Python never spawns processes here").
const REFUSAL =
  /(^|\n)(PermissionError|OSError|BlockingIOError|FileNotFoundError|MemoryError)\b|processes (are never spawned|cannot be spawned)/

export function sessionVerdict(stdout: string, error: { message: string } | undefined): Verdict {
  if (stdout.includes('ESCAPED')) return 'escaped'
  if (stdout.includes('PRELUDE-FAIL')) return 'error'
  if (stdout.includes('CONTAINED')) return 'contained'
  if (/^OK\b/m.test(stdout)) return 'ok'
  if (error && REFUSAL.test(error.message)) return 'contained'
  return 'error'
}

export type RunnerOptions = {
  // false: no OS jail, only the audit hook and its policy (the per-layer "audit" column).
  confine?: boolean
  // 'permissive': the hook grants all it can, so only the kernel layers are in the way.
  auditPolicy?: 'enforce' | 'permissive'
}

export async function startSessionRunner(h: Harness, opts: RunnerOptions = {}): Promise<SessionRunner> {
  const rt = await createRuntime({
    python: '3.11',
    pool: { size: 0 },
    confine: opts.confine,
    auditPolicy: opts.auditPolicy,
  })
  const live = new Map<string, Session>()
  const made: Session[] = []
  const roots: string[] = []
  const sentinelRoot = mkdtempSync(join(tmpdir(), 'vis-sentinel-'))
  roots.push(sentinelRoot)
  const limits = { ...LIMITS }

  async function open(c: AttackCase): Promise<Session> {
    const root = mkdtempSync(join(tmpdir(), 'vis-case-root-'))
    roots.push(root)
    const network = c.network === true
    const s = await rt.createSession({
      roots: [root],
      network: { enabled: network, allow: c.allow ?? [], deny: ['denied.example'] },
      shell: c.shell === true,
      limits,
    })
    made.push(s)
    const env: Record<string, string> = {
      VIS_TEST_ROOT: root,
      VIS_TEST_OUTSIDE: h.outside,
      VIS_TEST_HOST_PORT: String(h.hostPort),
      VIS_TEST_HOST_PID: String(process.pid),
      VIS_TEST_HOST_UNIX: h.hostUnix,
      VIS_TEST_ABSTRACT: h.abstractName,
    }
    await s.setData('VIS_CASE', { env })
    const r = await s.runBlock(PRELUDE)
    if (r.error) throw new Error(`the prelude failed in a session: ${r.error.message}`)
    return s
  }

  async function sessionFor(c: AttackCase): Promise<Session> {
    if (FRESH.has(c.category)) return open(c)
    const key = JSON.stringify([c.category, c.network === true, c.allow ?? [], c.shell === true])
    const cur = live.get(key)
    if (cur && cur.state === 'ready') return cur
    const s = await open(c)
    live.set(key, s)
    return s
  }

  const sentinel = await rt.createSession({ roots: [sentinelRoot], limits })
  return {
    rt,
    sentinel,
    async run(c) {
      const session = await sessionFor(c)
      try {
        const r = await session.runBlock(c.source, { timeoutMs: LIMITS.wallClockMs })
        const stdout = r.stdout ?? ''
        const verdict = sessionVerdict(stdout, r.error)
        return { verdict, stdout, stderr: r.error?.message ?? '', code: null, signal: null, session }
      } catch (err) {
        // The worker died or was retired under the case (OOM kill, limits): reported, not hung.
        const e = err as { code?: string; message?: string }
        const killed = session.state === 'retired' || e.code === 'worker.died' || e.code === 'worker.retired'
        return {
          verdict: killed ? 'killed' : 'error',
          stdout: '',
          stderr: `${e.code}: ${e.message}`,
          code: null,
          signal: null,
          session,
        }
      } finally {
        if (FRESH.has(c.category)) await session.dispose()
      }
    },
    async close() {
      await rt.close()
      for (const s of made) await s.dispose()
      for (const r of roots) rmSync(r, { recursive: true, force: true })
    },
  }
}

// What the host must still look like after any case: the file outside every root intact,
// nothing planted beside it or in the host's /tmp.
export function hostSnapshot(h: Harness): string {
  const st = statSync(join(h.outside, 'secret.txt'))
  return JSON.stringify({
    entries: readdirSync(h.outside).sort(),
    body: readFileSync(join(h.outside, 'secret.txt'), 'utf8'),
    mode: st.mode,
    mtime: st.mtimeMs,
    planted: readdirSync(tmpdir()).includes('vis-host-planted'),
  })
}
