import { errorMessage } from '../util/errors.js'

export type DriverLoad = { ok: true; sqlite: string } | { ok: false; message: string }

// Whether better-sqlite3 can open a database here: its JavaScript always imports, its native
// binary (written by its install script, which --ignore-scripts and pnpm skip) loads only now.
export async function checkSqliteDriver(): Promise<DriverLoad> {
  try {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(':memory:')
    try {
      const row = db.prepare('select sqlite_version() as v').get() as { v: string }
      return { ok: true, sqlite: row.v }
    } finally {
      db.close()
    }
  } catch (err) {
    const first = errorMessage(err).split('\n')[0] ?? ''
    const why = /Could not locate the bindings file/.test(first) ? 'it has no native binary' : first
    return { ok: false, message: why }
  }
}
