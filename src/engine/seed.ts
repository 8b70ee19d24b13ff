import { createHash } from 'node:crypto'
import { z } from 'zod'
import type { BlockResult } from '../sessions/block-result.js'
import type { BindOptions, RunBlockOptions, Session } from '../sessions/session.js'
import { VisError } from '../util/errors.js'
import { createEngine, type Engine, type EngineOptions } from './engine.js'
import type { CreateSessionBody } from './schemas.js'

// The seed's host surface: Python contexts addressed by a key the host chooses, as a thin layer
// over the engine (one documented entry: createEngine). A key names one engine session (its id
// derived from the key, so the same key in the same home finds the same session, its stored
// definitions included); a context is that session's worker. The surface keeps no store of its
// own: definitions snapshots live in the engine's store like any session's.
//
// A key whose worker was retired stays retired (it refuses to start a fresh interpreter that
// would silently lack its tools) until the host disposes it and creates it again.

// What a context may ask of its session: the engine's session policy.
export type ContextOptions = Pick<CreateSessionBody, 'roots' | 'network' | 'shell' | 'title'>

type Entry = { sessionId: string; session: Session; generation: number }

let engine: Engine | undefined
let engineStarting: Promise<Engine> | undefined
const contexts = new Map<string, Entry>()
// The last snapshot each key stored or read, so a restore right after a persist reads no row.
const defsMemo = new Map<string, unknown>()

// Chooses the engine the seed surface uses (otherwise one is created with defaults on first use).
export function useSeedEngine(e: Engine): void {
  engine = e
}

async function seedEngine(opts?: EngineOptions): Promise<Engine> {
  if (engine) return engine
  engineStarting ??= createEngine(opts).then((e) => {
    engine = e
    return e
  })
  return engineStarting
}

function requireEngine(): Engine {
  if (!engine) throw new VisError('runtime.closed', 'no engine: create a Python context first')
  return engine
}

// The session id a key stands for: readable, within the engine's id alphabet, unique per key.
export function contextSessionId(key: string): string {
  const safe = key.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64)
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 12)
  return `ctx-${safe}-${hash}`
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

// The key's session is created on first use and reopened after: a disposed context (or one of an
// earlier process on this home) comes back with a fresh worker under the session's stored policy.
export async function createPythonContext(key: string, opts: ContextOptions = {}): Promise<Session> {
  const existing = contexts.get(key)
  if (existing) {
    if (existing.session.state === 'ready') return existing.session
    if (existing.session.state === 'retired') return usable(key)
    contexts.delete(key)
  }
  const e = await seedEngine()
  const sessionId = contextSessionId(key)
  const row = e.store.sessions.get(sessionId)
  if (!row || row.closedAt !== null) {
    if (row) throw closedContext(key, sessionId)
    await e.createSession({ ...opts, id: sessionId })
  }
  const session = await e.runtimeSession(sessionId)
  contexts.set(key, { sessionId, session, generation: 0 })
  return session
}

function closedContext(key: string, sessionId: string): VisError {
  return new VisError(
    'session.closed',
    `the session ${sessionId} behind the Python context ${JSON.stringify(key)} was closed; use another key`,
    { sessionId },
  )
}

// Stops the context's worker; its session (history, definitions) stays for the next create.
export async function disposePythonContext(key: string): Promise<void> {
  const e = contexts.get(key)
  if (!e) return
  contexts.delete(key)
  await requireEngine().dropWorker(e.sessionId)
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
  return engine?.runtime.workerPids() ?? []
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

// Runs a block; the definitions snapshot it carries is stored as the key's session's.
export async function runPythonBlock(
  key: string,
  code: string,
  opts?: RunBlockOptions,
): Promise<BlockResult> {
  const s = usable(key)
  const before = s.lastSnapshot
  const outcome = await s.runBlock(code, opts)
  if (s.lastSnapshot !== undefined && s.lastSnapshot !== before) storeSnapshot(key, s.lastSnapshot)
  return outcome
}

function storeSnapshot(key: string, snapshot: unknown): void {
  defsMemo.set(key, snapshot)
  requireEngine().store.defs.write(entry(key).sessionId, snapshot)
}

// Takes a fresh snapshot of the session's own definitions and stores it for the key.
export async function persistSessionDefs(key: string): Promise<unknown> {
  const snapshot = await usable(key).callGuest('snapshot_defs')
  storeSnapshot(key, snapshot)
  return snapshot
}

// Restores the stored snapshot (memo first, then the engine's store) into the key's interpreter.
export async function restoreSessionDefs(key: string): Promise<unknown> {
  const s = usable(key)
  let snapshot = defsMemo.get(key)
  if (snapshot === undefined) {
    snapshot = requireEngine().store.defs.get(entry(key).sessionId)?.snapshot
    if (snapshot === undefined) return null
  }
  return s.callGuest('restore_defs', snapshot)
}

// Drops the in-memory memo; the stored snapshot stays.
export function forgetSessionDefs(key: string): boolean {
  return defsMemo.delete(key)
}

// Closes the seed's engine (its workers stop; sessions and their definitions stay stored).
export async function closeSeedEngine(): Promise<void> {
  const e = engine ?? (await engineStarting?.catch(() => undefined))
  engine = undefined
  engineStarting = undefined
  contexts.clear()
  defsMemo.clear()
  await e?.close()
}

/** @deprecated since issue 35: the seed runs on an engine; use closeSeedEngine. */
export const closeSeedRuntime = closeSeedEngine
