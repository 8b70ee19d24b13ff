// Which kind of constraint a failed write broke, on either backend. The repositories turn these
// into their own errors (db.session-exists, db.idempotency-conflict...), so the check must not
// depend on the driver: better-sqlite3 reports SQLITE_CONSTRAINT_* codes, the PostgreSQL driver
// a db.query-failed VisError carrying the SQLSTATE and the constraint's name.
export type ConstraintKind = 'primary-key' | 'unique' | 'foreign-key' | 'check' | 'not-null'

const SQLITE: Record<string, ConstraintKind> = {
  SQLITE_CONSTRAINT_PRIMARYKEY: 'primary-key',
  SQLITE_CONSTRAINT_UNIQUE: 'unique',
  SQLITE_CONSTRAINT_FOREIGNKEY: 'foreign-key',
  SQLITE_CONSTRAINT_CHECK: 'check',
  SQLITE_CONSTRAINT_NOTNULL: 'not-null',
}

const POSTGRES: Record<string, ConstraintKind> = {
  '23505': 'unique',
  '23503': 'foreign-key',
  '23514': 'check',
  '23502': 'not-null',
}

export function constraintViolation(err: unknown): ConstraintKind | undefined {
  const e = err as { code?: unknown; context?: { pgCode?: unknown; constraint?: unknown } }
  if (typeof e?.code !== 'string') return undefined
  if (e.code !== 'db.query-failed') return SQLITE[e.code]
  const kind = POSTGRES[String(e.context?.pgCode)]
  // PostgreSQL reports a primary key as a unique violation; its index is named <table>_pkey.
  if (kind === 'unique' && String(e.context?.constraint ?? '').endsWith('_pkey')) return 'primary-key'
  return kind
}
