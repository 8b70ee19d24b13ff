// A throwaway PostgreSQL server for tests (scratch-postgres.ts: Debian's
// binaries, initdb as `postgres` in a temporary directory, a free loopback port). One server per
// test process (node --test runs each file in its own), started on first use and stopped when
// the process ends; a fresh database per freshDatabaseUrl() call. Synchronous on purpose: the
// stores under test are synchronous, so tests stay plain functions.
//
//   import { freshDatabaseUrl } from '../helpers/postgres.js'
//   const store = new Store({ home, databaseUrl: freshDatabaseUrl() })
import { type ScratchServer, startScratchPostgres } from './scratch-postgres.js'

let server: ScratchServer | undefined

export function postgresServer(): ScratchServer {
  if (server) return server
  const s = startScratchPostgres()
  server = s
  process.on('exit', () => s.stop())
  // 'exit' does not run when a signal ends the process (the test runner's timeout, ^C): stop the
  // server then too, or it outlives the test.
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.once(sig, () => {
      s.stop()
      process.kill(process.pid, sig)
    })
  }
  return s
}

// A new, empty database on the file's server: each test gets its own schema from scratch.
export function freshDatabaseUrl(): string {
  return postgresServer().createDatabase('vis_test')
}
