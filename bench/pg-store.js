#!/usr/bin/env node
// What the PostgreSQL backend costs against SQLite, measured in the same run (issue 19).
// Reported, never asserted.
//
//   node --import tsx bench/pg-store.js [--json] [--queries N] [--blocks N] [--url postgres://...]
//
// Starts a throwaway PostgreSQL from Debian's binaries (as root: initdb runs as `postgres`) unless
// --url names one. Prints a point query's round trip through the synchronous driver and one
// block's persistence (start, two events, finish, defs), p50/p99, with the PostgreSQL/SQLite ratio.
import { formatPgStore, measurePgStore } from './pg-store-measure.ts'

const argv = process.argv.slice(2)
const opt = (name) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const result = measurePgStore({
  queries: opt('--queries') ? Number(opt('--queries')) : undefined,
  blocks: opt('--blocks') ? Number(opt('--blocks')) : undefined,
  url: opt('--url'),
})
console.log(argv.includes('--json') ? JSON.stringify(result) : formatPgStore(result))
