// Compiles the one schema definition (tables.ts) into each dialect's DDL. The differences
// between the dialects live here and nowhere else: the integer width to name, BLOB vs BYTEA,
// SQLite's STRICT tables and WITHOUT ROWID, and PostgreSQL's json_valid() (SQLite has it built in;
// PostgreSQL gets a function of that name, so the CHECKs read the same on both).
import type { Dialect } from '../statements.js'
import type { Column, ColumnType, Index, Migration, SchemaVersion, Sql, Step, Table } from './define.js'
import { SCHEMA } from './tables.js'

const TYPES: Record<Dialect, Record<ColumnType, string>> = {
  sqlite: { text: 'TEXT', integer: 'INTEGER', bigint: 'INTEGER', real: 'REAL', blob: 'BLOB', json: 'TEXT' },
  postgres: {
    text: 'TEXT',
    integer: 'INTEGER',
    bigint: 'BIGINT',
    real: 'DOUBLE PRECISION',
    blob: 'BYTEA',
    json: 'TEXT',
  },
}

// Declared with the first version on PostgreSQL; CREATE OR REPLACE keeps it idempotent.
const PG_JSON_VALID = `CREATE OR REPLACE FUNCTION json_valid(t text) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT AS $$
BEGIN
  PERFORM t::json;
  RETURN true;
EXCEPTION WHEN others THEN
  RETURN false;
END $$`

export function sqlType(type: ColumnType, dialect: Dialect): string {
  return TYPES[dialect][type]
}

const literal = (value: string | number): string =>
  typeof value === 'number' ? String(value) : `'${value.replaceAll("'", "''")}'`

const fragment = (sql: Sql, dialect: Dialect): string => (typeof sql === 'string' ? sql : sql(dialect))

function columnChecks(c: Column, dialect: Dialect): string[] {
  const checks: string[] = []
  if (c.type === 'json')
    checks.push(c.notNull ? `json_valid(${c.name})` : `${c.name} IS NULL OR json_valid(${c.name})`)
  if (c.oneOf) checks.push(`${c.name} IN (${c.oneOf.map(literal).join(', ')})`)
  if (c.check !== undefined) checks.push(fragment(c.check, dialect))
  return checks
}

function columnDdl(c: Column, dialect: Dialect): string {
  const parts = [c.name, sqlType(c.type, dialect)]
  if (c.primaryKey) parts.push('PRIMARY KEY')
  if (c.notNull) parts.push('NOT NULL')
  if (c.default !== undefined) parts.push(`DEFAULT ${literal(c.default)}`)
  if (c.references) {
    const r = c.references
    parts.push(`REFERENCES ${r.table}(${r.column}) ON DELETE ${r.onDelete.toUpperCase()}`)
  }
  for (const check of columnChecks(c, dialect)) parts.push(`CHECK (${check})`)
  return parts.join(' ')
}

function tableDdl(t: Table, dialect: Dialect): string {
  const lines = t.columns.map((c) => columnDdl(c, dialect))
  if (t.primaryKey) lines.push(`PRIMARY KEY (${t.primaryKey.join(', ')})`)
  for (const u of t.unique ?? []) lines.push(`UNIQUE (${u.join(', ')})`)
  for (const check of t.checks ?? []) lines.push(`CHECK (${fragment(check, dialect)})`)
  const options = dialect === 'sqlite' ? (t.withoutRowid ? ' STRICT, WITHOUT ROWID' : ' STRICT') : ''
  return `CREATE TABLE ${t.name} (\n  ${lines.join(',\n  ')}\n)${options}`
}

function indexDdl(i: Index): string {
  const where = i.where === undefined ? '' : ` WHERE ${i.where}`
  return `CREATE ${i.unique ? 'UNIQUE ' : ''}INDEX ${i.name} ON ${i.table}(${i.columns.join(', ')})${where}`
}

export function stepDdl(step: Step, dialect: Dialect): string {
  switch (step.kind) {
    case 'create-table':
      return tableDdl(step.table, dialect)
    case 'add-column':
      return `ALTER TABLE ${step.table} ADD COLUMN ${columnDdl(step.column, dialect)}`
    case 'create-index':
      return indexDdl(step.index)
    case 'drop-index':
      return `DROP INDEX ${step.name}`
  }
}

export function compileMigrations(
  dialect: Dialect,
  versions: readonly SchemaVersion[] = SCHEMA,
): Migration[] {
  const first = Math.min(...versions.map((v) => v.version))
  return versions.map((v) => {
    const statements = v.steps.map((s) => stepDdl(s, dialect))
    if (dialect === 'postgres' && v.version === first) statements.unshift(PG_JSON_VALID)
    return { version: v.version, name: v.name, sql: `${statements.join(';\n')};\n` }
  })
}

// The tables and indexes the versions leave behind, in creation order (a column added later comes
// after the table's first ones, as ALTER TABLE puts it): what both databases must end with.
export function resultingSchema(versions: readonly SchemaVersion[] = SCHEMA): {
  tables: Table[]
  indexes: Index[]
} {
  const tables = new Map<string, Table>()
  const indexes = new Map<string, Index>()
  for (const v of [...versions].sort((a, b) => a.version - b.version)) {
    for (const step of v.steps) {
      if (step.kind === 'create-table') tables.set(step.table.name, step.table)
      else if (step.kind === 'create-index') indexes.set(step.index.name, step.index)
      else if (step.kind === 'drop-index') indexes.delete(step.name)
      else {
        const table = tables.get(step.table)
        if (!table)
          throw new Error(`schema version ${v.version} adds a column to unknown table ${step.table}`)
        tables.set(step.table, { ...table, columns: [...table.columns, step.column] })
      }
    }
  }
  return { tables: [...tables.values()], indexes: [...indexes.values()] }
}
