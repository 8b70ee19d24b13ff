import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { VisError } from '../util/errors.js'
import type { BlockResult } from './block-result.js'
import { createRuntime, type Runtime, type RuntimeOptions, type SessionOptions } from './runtime.js'
import type { BindOptions, RunBlockOptions, Session } from './session.js'

// The seed's host surface: Python contexts addressed by a key the host chooses. A key
// whose worker was retired stays retired (it refuses to start a fresh interpreter that
// would silently lack its tools) until the host disposes it and creates it again.

type Entry = { session: Session; generation: number }

let runtime: Runtime | undefined
let runtimeStarting: Promise<Runtime> | undefined
const contexts = new Map<string, Entry>()
const defsMemo = new Map<string, unknown>()

// Chooses the runtime the seed surface uses (otherwise one is created with defaults).
export function useSeedRuntime(rt: Runtime): void {
  runtime = rt
}

async function seedRuntime(opts?: RuntimeOptions): Promise<Runtime> {
  if (runtime) return runtime
  runtimeStarting ??= createRuntime(opts).then((rt) => {
    runtime = rt
    return rt
  })
  return runtimeStarting
}

function entry(key: string): Entry {
  const e = contexts.get(key)
  if (!e) {
    throw new VisError('session.not-found', `no Python context for ${JSON.stringify(key)}; create it first`, {
      sessionId: key,
    })
  }
  return e
}

function usable(key: string): Session {
  const s = entry(key).session
  if (s.state === 'retired') {
    throw new VisError(
      'worker.retired',
      `the Python context ${JSON.stringify(key)} was retired (${s.retiredReason}); dispose it and create it again`,
      { sessionId: key },
    )
  }
  return s
}

export async function createPythonContext(key: string, opts: SessionOptions = {}): Promise<Session> {
  const existing = contexts.get(key)
  if (existing) {
    if (existing.session.state === 'ready') return existing.session
    if (existing.session.state === 'retired') return usable(key)
    contexts.delete(key)
  }
  const rt = await seedRuntime()
  const session = await rt.createSession({ ...opts, id: opts.id ?? key })
  contexts.set(key, { session, generation: 0 })
  return session
}

export async function disposePythonContext(key: string): Promise<void> {
  const e = contexts.get(key)
  if (!e) return
  contexts.delete(key)
  await e.session.dispose()
}

export function retirePythonContext(key: string, reason = 'retired by the host'): void {
  entry(key).session.retire(reason)
}

// Answers whether the interrupt landed in a running block.
export async function interruptGuest(key: string): Promise<boolean> {
  const e = contexts.get(key)
  if (!e) return false
  return (await e.session.interrupt()).landed
}

export function takePartialBlockStdout(key: string): string {
  return contexts.get(key)?.session.takePartialStdout() ?? ''
}

export function pythonWorkerPids(): number[] {
  return runtime?.workerPids() ?? []
}

export async function setPythonBinding(
  key: string,
  name: string,
  value: unknown,
  opts?: BindOptions,
): Promise<void> {
  await usable(key).setBinding(name, value, opts)
}

// Binds and bumps the context's generation, so a host can tell which bindings a block saw.
export async function bindAndBump(
  key: string,
  name: string,
  value: unknown,
  opts?: BindOptions,
): Promise<number> {
  const e = entry(key)
  await setPythonBinding(key, name, value, opts)
  e.generation++
  return e.generation
}

// Binds the host's current context into the key's session: `session` in the guest is
// this dict now and before every later block that does not pass its own context.
export async function bindCtx(key: string, ctx: Record<string, unknown>): Promise<void> {
  await usable(key).bindContext(ctx)
}

export async function countTopLevelForms(key: string, code: string): Promise<number> {
  return z
    .number()
    .int()
    .min(0)
    .parse(await usable(key).callGuest('count_top_level_forms', code))
}

export async function validateNoBannedDefs(key: string, code: string): Promise<unknown> {
  return usable(key).callGuest('validate_no_banned_defs', code)
}

// Runs a block; the definitions snapshot it carries is persisted for the key.
export async function runPythonBlock(
  key: string,
  code: string,
  opts?: RunBlockOptions,
): Promise<BlockResult> {
  const s = usable(key)
  const before = s.lastSnapshot
  const outcome = await s.runBlock(code, opts)
  if (s.lastSnapshot !== undefined && s.lastSnapshot !== before) persistSnapshot(key, s.lastSnapshot)
  return outcome
}

function defsPath(key: string): string {
  const safe = key.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64)
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 12)
  const home = runtime?.home
  if (!home) throw new VisError('runtime.closed', 'no runtime: create a Python context first')
  return join(home, 'sessions', `${safe}-${hash}`, 'defs.json')
}

function persistSnapshot(key: string, snapshot: unknown): void {
  defsMemo.set(key, snapshot)
  const path = defsPath(key)
  mkdirSync(join(path, '..'), { recursive: true })
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(snapshot))
  renameSync(tmp, path)
}

// Takes a fresh snapshot of the session's own definitions and stores it for the key.
export async function persistSessionDefs(key: string): Promise<unknown> {
  const snapshot = await usable(key).callGuest('snapshot_defs')
  persistSnapshot(key, snapshot)
  return snapshot
}

// Restores the stored snapshot (memo first, then the file) into the key's interpreter.
export async function restoreSessionDefs(key: string): Promise<unknown> {
  const s = usable(key)
  let snapshot = defsMemo.get(key)
  if (snapshot === undefined) {
    try {
      snapshot = JSON.parse(readFileSync(defsPath(key), 'utf8'))
    } catch {
      return null
    }
  }
  return s.callGuest('restore_defs', snapshot)
}

// Drops the in-memory memo; the file stays.
export function forgetSessionDefs(key: string): boolean {
  return defsMemo.delete(key)
}

export async function closeSeedRuntime(): Promise<void> {
  const rt = runtime
  runtime = undefined
  runtimeStarting = undefined
  contexts.clear()
  defsMemo.clear()
  await rt?.close()
}
