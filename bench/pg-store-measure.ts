// What the synchronous PostgreSQL driver costs (issue 19), for bench/pg-store.js (run with
// `node --import tsx`: it starts the test suite's throwaway server). Reported, never
// asserted. Two figures, each against SQLite measured in the same run:
// - one query's round trip (a prepared point read): main thread -> worker -> server -> back;
// - one block's persistence, the engine's sequence per block (start with an idempotency key,
//   block.started event, finish with stdout, block.finished event, defs snapshot).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PgDatabase } from '../src/persistence/postgres/database.js'
import { Store } from '../src/persistence/store.js'
import { startScratchPostgres } from '../test/helpers/scratch-postgres.js'

export type Percentiles = { p50: number; p99: number; mean: number }
export type Side = { query: Percentiles; block: Percentiles }
export type PgStoreBench = {
  queries: number
  blocks: number
  sqlite: Side
  postgres: Side & { roundTripsPerBlock: number }
  // postgres / sqlite, per figure (p50).
  ratio: { query: number; block: number }
}

function percentiles(samples: number[]): Percentiles {
  const s = [...samples].sort((a, b) => a - b)
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!
  return { p50: at(0.5), p99: at(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length }
}

function timeEach(n: number, fn: (i: number) => void): number[] {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    fn(i)
    out.push((performance.now() - t) * 1000) // microseconds
  }
  return out
}

function measure(store: Store, queries: number, blocks: number): Side {
  const session = store.sessions.create({ title: 'bench' })
  const read = store.db.prepare('SELECT event_seq FROM sessions WHERE id = ?').pluck()
  timeEach(Math.min(200, queries), () => read.get(session.id)) // warm: statements prepared
  const query = timeEach(queries, () => read.get(session.id))
  const block = timeEach(blocks, (n) => {
    const { block: b } = store.blocks.start({
      sessionId: session.id,
      code: `x = ${n}`,
      idempotencyKey: `k${n}`,
    })
    store.events.append(session.id, { type: 'block.started', data: { block_id: b.id } })
    store.blocks.finish(b.id, { stdout: `${n}\n`, durationMs: 1 })
    store.events.append(session.id, { type: 'block.finished', data: { block_id: b.id } })
    store.defs.write(session.id, { x: n })
  })
  return { query: percentiles(query), block: percentiles(block) }
}

export function measurePgStore(
  options: { queries?: number; blocks?: number; url?: string } = {},
): PgStoreBench {
  const queries = options.queries ?? 5000
  const blocks = options.blocks ?? 300
  const home = mkdtempSync(join(tmpdir(), 'vis-bench-pg-'))
  const server = options.url === undefined ? startScratchPostgres() : undefined
  try {
    // SQLite as the engine runs it by default: durability full, one fsync per commit.
    const lite = new Store({ home: join(home, 'sqlite'), databaseUrl: '' })
    const sqlite = measure(lite, queries, blocks)
    lite.close()
    const url = options.url ?? server!.createDatabase('vis_bench')
    const pg = new Store({ home: join(home, 'pg'), databaseUrl: url })
    const client = (pg.db as PgDatabase).client
    const before = client.requests
    const postgres = measure(pg, queries, blocks)
    const roundTripsPerBlock = (client.requests - before - queries - Math.min(200, queries) - 1) / blocks
    pg.close()
    return {
      queries,
      blocks,
      sqlite,
      postgres: { ...postgres, roundTripsPerBlock },
      ratio: { query: postgres.query.p50 / sqlite.query.p50, block: postgres.block.p50 / sqlite.block.p50 },
    }
  } finally {
    server?.stop()
    rmSync(home, { recursive: true, force: true })
  }
}

export function formatPgStore(r: PgStoreBench): string {
  const us = (p: Percentiles) => `p50 ${p.p50.toFixed(0)} us, p99 ${p.p99.toFixed(0)} us`
  return [
    `point query (${r.queries}):   sqlite ${us(r.sqlite.query)}   postgres ${us(r.postgres.query)}   ratio ${r.ratio.query.toFixed(1)}x`,
    `block persisted (${r.blocks}): sqlite ${us(r.sqlite.block)}   postgres ${us(r.postgres.block)}   ratio ${r.ratio.block.toFixed(1)}x`,
    `postgres round trips per block: ${r.postgres.roundTripsPerBlock.toFixed(1)}`,
  ].join('\n')
}
