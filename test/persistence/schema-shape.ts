// What a database's schema actually is, read back from the database itself (SQLite's pragmas,
// PostgreSQL's catalogs) into one comparable shape, and the shape the schema definition
// (src/persistence/schema/tables.ts) says each dialect must have.
import type Database from 'better-sqlite3'
import { resultingSchema } from '../../src/persistence/schema/ddl.js'
import type { Column, ColumnType, Table } from '../../src/persistence/schema/define.js'
import type { Dialect } from '../../src/persistence/statements.js'

export type ColumnShape = { name: string; type: string; notNull: boolean; default: string | null }
export type TableShape = {
  name: string
  columns: ColumnShape[]
  primaryKey: string[]
  unique: string[][]
  foreignKeys: string[] // "column -> table(column) on delete ..."
  checks: number
}
export type IndexShape = { name: string; table: string; columns: string[]; unique: boolean; partial: boolean }
export type SchemaShape = { tables: TableShape[]; indexes: IndexShape[] }

const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name)

export function sqliteShape(db: Database.Database): SchemaShape {
  const names = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[]
  ).filter((n) => !n.startsWith('sqlite_'))
  const tables = names.map((name): TableShape => {
    const info = db.prepare('SELECT * FROM pragma_table_info(?) ORDER BY cid').all(name) as {
      name: string
      type: string
      notnull: number
      dflt_value: string | null
      pk: number
    }[]
    const indexList = db.prepare('SELECT * FROM pragma_index_list(?)').all(name) as {
      name: string
      origin: string
    }[]
    const indexColumns = (index: string) =>
      db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').pluck().all(index) as string[]
    const fks = db.prepare('SELECT * FROM pragma_foreign_key_list(?) ORDER BY id, seq').all(name) as {
      from: string
      table: string
      to: string
      on_delete: string
    }[]
    const sql = db
      .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
      .pluck()
      .get(name) as string
    return {
      name,
      columns: info.map((c) => ({
        name: c.name,
        type: c.type.toLowerCase(),
        // A PRIMARY KEY column of a rowid table may hold NULL on SQLite only when declared so; ours
        // are TEXT keys the repositories always fill, and PostgreSQL implies NOT NULL: compare the
        // declaration.
        notNull: c.notnull === 1 || c.pk > 0,
        default: c.dflt_value,
      })),
      primaryKey: info
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name),
      unique: indexList
        .filter((i) => i.origin === 'u')
        .map((i) => indexColumns(i.name))
        .sort(),
      foreignKeys: fks
        .map((f) => `${f.from} -> ${f.table}(${f.to}) on delete ${f.on_delete.toLowerCase()}`)
        .sort(),
      checks: (sql.match(/\bCHECK\s*\(/gi) ?? []).length,
    }
  })
  const indexes = (
    db.prepare("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").all() as {
      name: string
      tbl_name: string
    }[]
  ).map((i): IndexShape => {
    const entry = (
      db.prepare('SELECT * FROM pragma_index_list(?)').all(i.tbl_name) as {
        name: string
        unique: number
        partial: number
      }[]
    ).find((e) => e.name === i.name)!
    return {
      name: i.name,
      table: i.tbl_name,
      columns: db
        .prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno')
        .pluck()
        .all(i.name) as string[],
      unique: entry.unique === 1,
      partial: entry.partial === 1,
    }
  })
  return { tables: tables.sort(byName), indexes: indexes.sort(byName) }
}

// The subset of the PostgreSQL driver this needs (PgDatabase and better-sqlite3 both fit).
type Query = { prepare(sql: string): { all(...p: unknown[]): unknown[] } }

const ON_DELETE: Record<string, string> = {
  c: 'cascade',
  n: 'set null',
  a: 'no action',
  r: 'restrict',
  d: 'set default',
}

export function pgShape(db: Query): SchemaShape {
  const all = <T>(sql: string, ...params: unknown[]) => db.prepare(sql).all(...params) as T[]
  const names = all<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'schema_version' ORDER BY table_name",
  ).map((r) => r.name)
  // Constraint columns in key order, by constraint type.
  const constraintColumns = (table: string, type: string) =>
    all<{ cols: string[] | string }>(
      `SELECT array_agg(a.attname::text ORDER BY k.ord) AS cols
         FROM pg_constraint c
         CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
        WHERE c.conrelid = ?::regclass AND c.contype = ?
        GROUP BY c.oid`,
      table,
      type,
    ).map((r) =>
      Array.isArray(r.cols)
        ? r.cols
        : String(r.cols)
            .replace(/^\{|\}$/g, '')
            .split(','),
    )
  const tables = names.map((name): TableShape => {
    const columns = all<{ name: string; type: string; nullable: string; dflt: string | null }>(
      `SELECT column_name AS name, data_type AS type, is_nullable AS nullable, column_default AS dflt
         FROM information_schema.columns WHERE table_schema = 'public' AND table_name = ? ORDER BY ordinal_position`,
      name,
    )
    const fks = all<{ col: string; ref: string; refcol: string; del: string }>(
      `SELECT a.attname AS col, r.relname AS ref, ra.attname AS refcol, c.confdeltype AS del
         FROM pg_constraint c
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
         JOIN pg_class r ON r.oid = c.confrelid
         JOIN pg_attribute ra ON ra.attrelid = c.confrelid AND ra.attnum = c.confkey[1]
        WHERE c.conrelid = ?::regclass AND c.contype = 'f'`,
      name,
    )
    const checks = all<{ n: number | string }>(
      "SELECT count(*) AS n FROM pg_constraint WHERE conrelid = ?::regclass AND contype = 'c'",
      name,
    )[0]!.n
    return {
      name,
      columns: columns.map((c) => ({
        name: c.name,
        type: c.type,
        notNull: c.nullable === 'NO',
        default: c.dflt === null ? null : c.dflt.replace(/::text$/, ''),
      })),
      primaryKey: constraintColumns(name, 'p')[0] ?? [],
      unique: constraintColumns(name, 'u').sort(),
      foreignKeys: fks.map((f) => `${f.col} -> ${f.ref}(${f.refcol}) on delete ${ON_DELETE[f.del]}`).sort(),
      checks: Number(checks),
    }
  })
  // Indexes declared as such: not the ones PostgreSQL builds behind a PRIMARY KEY or UNIQUE.
  const indexes = all<{
    name: string
    table: string
    cols: string[] | string
    uniq: boolean
    partial: boolean
  }>(
    `SELECT i.relname AS name, t.relname AS table, array_agg(a.attname::text ORDER BY k.ord) AS cols,
            x.indisunique AS uniq, x.indpred IS NOT NULL AS partial
       FROM pg_index x
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
       CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      WHERE NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
        AND t.relname <> 'schema_version'
      GROUP BY i.relname, t.relname, x.indisunique, x.indpred IS NOT NULL`,
  ).map((r) => ({
    name: r.name,
    table: r.table,
    columns: Array.isArray(r.cols)
      ? r.cols
      : String(r.cols)
          .replace(/^\{|\}$/g, '')
          .split(','),
    unique: r.uniq,
    partial: r.partial,
  }))
  return { tables: tables.sort(byName), indexes: indexes.sort(byName) }
}

// The test's own statement of what each logical type must read back as (not the compiler's table,
// so a wrong mapping in src/persistence/schema/ddl.ts fails here): 64-bit where ms timestamps and
// byte counts must fit, SQLite's STRICT type names there.
const READ_BACK: Record<ColumnType, { sqlite: string; postgres: string }> = {
  text: { sqlite: 'text', postgres: 'text' },
  integer: { sqlite: 'integer', postgres: 'integer' },
  bigint: { sqlite: 'integer', postgres: 'bigint' },
  real: { sqlite: 'real', postgres: 'double precision' },
  blob: { sqlite: 'blob', postgres: 'bytea' },
  json: { sqlite: 'text', postgres: 'text' },
}

function expectedColumn(c: Column, dialect: Dialect): ColumnShape {
  return {
    name: c.name,
    type: READ_BACK[c.type][dialect],
    notNull: c.notNull === true || c.primaryKey === true,
    default:
      c.default === undefined ? null : typeof c.default === 'number' ? String(c.default) : `'${c.default}'`,
  }
}

function expectedTable(t: Table, dialect: Dialect): TableShape {
  const columnChecks = t.columns.reduce(
    (n, c) => n + (c.type === 'json' ? 1 : 0) + (c.oneOf ? 1 : 0) + (c.check !== undefined ? 1 : 0),
    0,
  )
  return {
    name: t.name,
    columns: t.columns.map((c) => expectedColumn(c, dialect)),
    primaryKey: t.primaryKey ? [...t.primaryKey] : t.columns.filter((c) => c.primaryKey).map((c) => c.name),
    unique: (t.unique ?? []).map((u) => [...u]).sort(),
    foreignKeys: t.columns
      .filter((c) => c.references)
      .map(
        (c) =>
          `${c.name} -> ${c.references!.table}(${c.references!.column}) on delete ${c.references!.onDelete}`,
      )
      .sort(),
    checks: columnChecks + (t.checks?.length ?? 0),
  }
}

// What the definition says `dialect` must end with.
export function expectedShape(dialect: Dialect): SchemaShape {
  const { tables, indexes } = resultingSchema()
  return {
    tables: tables.map((t) => expectedTable(t, dialect)).sort(byName),
    indexes: indexes
      .map((i) => ({
        name: i.name,
        table: i.table,
        columns: [...i.columns],
        unique: i.unique === true,
        partial: i.where !== undefined,
      }))
      .sort(byName),
  }
}

// The part of a shape that does not depend on the dialect: everything but the declared types.
export function neutral(shape: SchemaShape): SchemaShape {
  return {
    ...shape,
    tables: shape.tables.map((t) => ({ ...t, columns: t.columns.map((c) => ({ ...c, type: '' })) })),
  }
}
