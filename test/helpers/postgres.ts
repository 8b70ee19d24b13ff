// A throwaway PostgreSQL server for tests, from Debian's `postgresql` package: initdb into a
// temporary directory owned by the `postgres` user (the server refuses to run as root), start it
// on a free loopback port with its socket inside that directory, and stop it (-m immediate) when
// the process exits. One server per test process (node --test runs each file in its own), a
// fresh database per call to freshDatabaseUrl(). Synchronous on purpose: the stores under test
// are synchronous, so tests stay plain functions.
import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PgDatabase } from '../../src/persistence/postgres/database.js'

export type PgServer = {
  port: number
  dir: string
  // postgres://vis@127.0.0.1:PORT/<name>
  url(database: string): string
}

function pgBin(): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : []
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin')
  throw new Error(
    "PostgreSQL's server binaries are not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install -y postgresql",
  )
}

function uidGid(user: string): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim())
  return { uid, gid }
}

// A port free right now on loopback (the server binds it a moment later).
function freePort(): number {
  const r = spawnSync(
    process.execPath,
    [
      '-e',
      "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})",
    ],
    { encoding: 'utf8' },
  )
  const port = Number(r.stdout.trim())
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no free port: ${r.stderr}`)
  return port
}

let server: PgServer | undefined
let databases = 0

export function postgresServer(): PgServer {
  if (server) return server
  const bin = pgBin()
  const dir = mkdtempSync(join(tmpdir(), 'vis-pg-'))
  const { uid, gid } = uidGid('postgres')
  chownSync(dir, uid, gid)
  const asPostgres = (cmd: string, args: string[]) => {
    const r = spawnSync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { encoding: 'utf8' })
    if (r.status !== 0) {
      const log = existsSync(join(dir, 'pg.log')) ? readFileSync(join(dir, 'pg.log'), 'utf8') : ''
      throw new Error(`${cmd} failed (${r.status}): ${r.stderr}${r.stdout}\n${log}`)
    }
  }
  const data = join(dir, 'data')
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'vis', '-E', 'UTF8', '--no-sync'])
  let port = 0
  for (let attempt = 0; ; attempt++) {
    port = freePort()
    try {
      asPostgres('pg_ctl', [
        '-D',
        data,
        '-w',
        '-t',
        '60',
        '-l',
        join(dir, 'pg.log'),
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on`,
        'start',
      ])
      break
    } catch (err) {
      // Someone took the port between our probe and the server's bind: another one.
      if (attempt >= 3) throw err
    }
  }
  const stop = () => {
    spawnSync('runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'])
    rmSync(dir, { recursive: true, force: true })
  }
  process.on('exit', stop)
  // 'exit' does not run when a signal ends the process (the test runner's timeout, ^C): stop the
  // server then too, or it outlives the test.
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.once(sig, () => {
      stop()
      process.kill(process.pid, sig)
    })
  }
  server = { port, dir, url: (database) => `postgres://vis@127.0.0.1:${port}/${database}` }
  return server
}

// A new, empty database on the file's server: each test gets its own schema from scratch.
export function freshDatabaseUrl(): string {
  const s = postgresServer()
  const name = `vis_test_${process.pid}_${++databases}`
  const admin = new PgDatabase(s.url('postgres'))
  try {
    admin.exec(`CREATE DATABASE ${name}`)
  } finally {
    admin.close()
  }
  return s.url(name)
}
