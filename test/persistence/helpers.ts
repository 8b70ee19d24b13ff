import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { Store, type StoreOptions } from '../../src/persistence/index.js'
import { freshDatabaseUrl } from '../helpers/postgres.js'

// The persistence suite runs against both backends (issue 19): SQLite under a temp home, and
// PostgreSQL started by test/helpers/postgres.ts from Debian's package, a fresh database per test.
export type Backend = 'sqlite' | 'postgres'
export const BACKENDS: readonly Backend[] = ['sqlite', 'postgres']

// A fresh vis home per call, also exported as VIS_HOME so nothing can reach ~/.vis; removed after the file.
export function tempHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'vis-persist-'))
  process.env.VIS_HOME = home
  after(() => rmSync(home, { recursive: true, force: true }))
  return home
}

// Where a test's store lives: a fresh home, and on PostgreSQL a fresh database. `new Store(place)`
// opens it (again); the empty databaseUrl pins SQLite even when VIS_DATABASE_URL is set.
export function tempPlace(backend: Backend = 'sqlite'): { home: string; databaseUrl: string } {
  const home = tempHome()
  return { home, databaseUrl: backend === 'postgres' ? freshDatabaseUrl() : '' }
}

export function openTempStore(options: StoreOptions = {}, backend: Backend = 'sqlite'): Store {
  const store = new Store({ ...tempPlace(backend), ...options })
  after(() => store.close())
  return store
}
