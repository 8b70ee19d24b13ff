// The vocabulary of the one schema definition (tables.ts): columns, tables, indexes and the
// migration steps built from them. Nothing here knows a dialect; ddl.ts compiles these into
// SQLite's and PostgreSQL's DDL, so both databases are derived from the same typed source.
import type { Dialect } from '../statements.js'

// A column's logical type. The dialects differ only in how wide an integer they need to name:
// `bigint` holds ms timestamps, byte counts and counters (INTEGER is already 64-bit on SQLite,
// BIGINT on PostgreSQL); `json` is text the database itself refuses unless it parses.
export type ColumnType = 'text' | 'integer' | 'bigint' | 'real' | 'blob' | 'json'

// A SQL fragment: the same text on both dialects, or one built per dialect where they spell a
// function differently (see byteLength).
export type Sql = string | ((dialect: Dialect) => string)

export type OnDelete = 'cascade' | 'set null'

export type Column = {
  readonly name: string
  readonly type: ColumnType
  readonly notNull?: boolean
  readonly primaryKey?: boolean
  // A string is a text literal (quoted on output), a number a numeric one.
  readonly default?: string | number
  readonly references?: { readonly table: string; readonly column: string; readonly onDelete: OnDelete }
  // Shorthand for CHECK (name IN (...)).
  readonly oneOf?: readonly (string | number)[]
  readonly check?: Sql
}

export type Table = {
  readonly name: string
  readonly columns: readonly Column[]
  // Composite primary key; a single-column key is Column.primaryKey.
  readonly primaryKey?: readonly string[]
  readonly unique?: readonly (readonly string[])[]
  readonly checks?: readonly Sql[]
  // SQLite's clustered-table layout; PostgreSQL has no such choice and ignores it.
  readonly withoutRowid?: boolean
}

export type Index = {
  readonly name: string
  readonly table: string
  readonly columns: readonly string[]
  readonly unique?: boolean
  // A partial index's predicate, written in SQL both dialects read alike.
  readonly where?: string
}

export type Step =
  | { readonly kind: 'create-table'; readonly table: Table }
  | { readonly kind: 'add-column'; readonly table: string; readonly column: Column }
  | { readonly kind: 'create-index'; readonly index: Index }
  | { readonly kind: 'drop-index'; readonly name: string }

// One schema version: append only. A released version is never edited (databases in the field
// already ran it); the next change is a new version.
export type SchemaVersion = {
  readonly version: number
  readonly name: string
  readonly steps: readonly Step[]
}

// What a database runs: one version's DDL for one dialect, compiled by ddl.ts.
export type Migration = {
  readonly version: number
  readonly name: string
  readonly sql: string
}

export const createTable = (table: Table): Step => ({ kind: 'create-table', table })
export const addColumn = (table: string, column: Column): Step => ({ kind: 'add-column', table, column })
export const createIndex = (index: Index): Step => ({ kind: 'create-index', index })
export const dropIndex = (name: string): Step => ({ kind: 'drop-index', name })

// The byte length of a blob: length() on SQLite, octet_length() on PostgreSQL.
export const byteLength = (column: string, dialect: Dialect): string =>
  dialect === 'postgres' ? `octet_length(${column})` : `length(${column})`
