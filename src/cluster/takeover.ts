import type { Engine } from '../engine/engine.js'
import { finishedEventData } from '../engine/events-bridge.js'
import type { Block, BlockError } from '../persistence/index.js'
import type { Lease } from '../persistence/leases.js'
import { RestoreReportSchema, type Survived, survivedReplacement } from '../sessions/survived.js'
import { isVisError } from '../util/errors.js'

// Where a node keeps each session's names after its last finished block (the extension kv table,
// under a name no extension file can have): the node taking a session over compares them with
// what the defs snapshot rebuilt, and reports the rest as lost.
export const NAMES_KV = 'vis:cluster'
export const namesKey = (sessionId: string) => `names/${sessionId}`

export type TakeoverResult = { lost: string[]; survived?: Survived }

// A session whose lease this node just took without having held it: whoever ran it before is
// gone (its lease expired, or an earlier run of this node died). Blocks the store still shows
// running will never finish: each ends `lost` with the output its node had persisted, and the
// session is served on a fresh worker restored from its defs snapshot.
export async function takeOver(
  engine: Engine,
  sessionId: string,
  nodeId: string,
  previous: Lease | undefined,
): Promise<TakeoverResult> {
  // A worker this process kept from an earlier time it held the session is stale.
  await engine.dropWorker(sessionId)
  const running = engine.store.blocks.listBySession(sessionId).filter((b) => b.status === 'running')
  const before = namesBefore(engine, sessionId)
  // Nothing ran there, nothing to lose: the next block reopens the worker as after a restart.
  if (running.length === 0 && before.length === 0) return { lost: [] }
  const from = previous?.nodeId ?? 'an earlier run of this node'
  const closed = engine.sessionView(sessionId).state === 'closed'
  let survived: Survived
  if (closed) {
    survived = survivedReplacement('node-lost', before, undefined, [], 'the session is closed')
  } else {
    // The fresh worker now, so that what came back is known: reopenWorker reports what the
    // snapshot rebuilt as a defs.restored event, and the next block reads the comparison as
    // session['survived'].
    let report: unknown
    const off = engine.subscribe(sessionId, (ev) => {
      if (ev.type === 'defs.restored') report = ev.data
    })
    try {
      const session = await engine.runtimeSession(sessionId)
      const parsed = RestoreReportSchema.safeParse(report ?? {})
      survived = survivedReplacement('node-lost', before, parsed.success ? parsed.data : undefined, [])
      session.noteSurvived(survived)
    } catch (err) {
      survived = survivedReplacement('node-lost', before, undefined, [], (err as Error).message)
    } finally {
      off()
    }
  }
  engine.emit(sessionId, 'worker.replaced', {
    reason: `node ${from} stopped while the session was live; node ${nodeId} took it over`,
    from_node: previous?.nodeId ?? null,
    to_node: nodeId,
    survived,
  })
  return { lost: finishLost(engine, sessionId, running, from, nodeId, survived), survived }
}

function namesBefore(engine: Engine, sessionId: string): string[] {
  const v = engine.store.kv.get(NAMES_KV, namesKey(sessionId))
  return Array.isArray(v) ? v.filter((n): n is string => typeof n === 'string') : []
}

// What the dead node had persisted of each block's output: its output events.
function persistedOutput(engine: Engine, sessionId: string, blockIds: Set<string>) {
  const out = new Map<string, { stdout: string; stderr: string }>()
  for (const id of blockIds) out.set(id, { stdout: '', stderr: '' })
  let after = 0
  for (;;) {
    const page = engine.replayEvents(sessionId, after, 1000)
    for (const ev of page.events) {
      const d = ev.data as { block_id?: string; stream?: string; data?: string } | null
      if (ev.type !== 'output' || !d || typeof d.block_id !== 'string' || typeof d.data !== 'string') continue
      const acc = out.get(d.block_id)
      if (acc && (d.stream === 'stdout' || d.stream === 'stderr')) acc[d.stream] += d.data
    }
    if (page.events.length < 1000) return out
    after = page.events.at(-1)!.id
  }
}

function finishLost(
  engine: Engine,
  sessionId: string,
  running: Block[],
  from: string,
  nodeId: string,
  survived: Survived,
): string[] {
  const output = persistedOutput(engine, sessionId, new Set(running.map((b) => b.id)))
  const lost: string[] = []
  for (const b of running) {
    const partial = output.get(b.id) ?? { stdout: '', stderr: '' }
    try {
      const stored = engine.store.transaction((): Block => {
        const s = engine.store.blocks.finish(b.id, {
          ...partial,
          error: {
            code: 'block.lost',
            message:
              `Node ${from} stopped while this block was running; node ${nodeId} took the session over. ` +
              'Its output is kept up to what that node had stored; `survived` says which names came back. Run it again if it should complete.',
            from_node: from,
            to_node: nodeId,
          } as BlockError,
          durationMs: Math.max(0, Date.now() - b.createdAt),
          survived,
        })
        engine.emit(sessionId, 'block.finished', finishedEventData(s, []))
        return s
      })
      lost.push(stored.id)
    } catch (err) {
      // Its node finished it after all (it lost the lease, not its life): keep that outcome.
      if (!isVisError(err, 'db.block-finished')) throw err
    }
  }
  return lost
}
