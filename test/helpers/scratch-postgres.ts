// A throwaway PostgreSQL server from the Debian package's binaries, for tests and benchmarks
// (never for production: trust authentication, loopback only). initdb into a temporary directory
// owned by the `postgres` user (the server refuses to run as root), start it on a free loopback
// port with its socket inside that directory, stop it (-m immediate) and remove the directory.
// Synchronous, like the stores that use it.
import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PgDatabase } from '../../src/persistence/postgres/database.js'

export type ScratchServer = {
  port: number
  dir: string
  // postgres://vis@127.0.0.1:PORT/<database>
  url(database: string): string
  // CREATE DATABASE under a new name; returns its URL.
  createDatabase(prefix?: string): string
  stop(): void
}

function pgBin(): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : []
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin')
  throw new Error(
    "PostgreSQL's server binaries are not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install -y postgresql",
  )
}

function idOf(flag: '-u' | '-g', user: string): number {
  return Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim())
}

// A port free right now on loopback (the server binds it a moment later; a clash is retried).
function freePort(): number {
  const probe =
    "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
  const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' })
  const port = Number(r.stdout.trim())
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no free port: ${r.stderr}`)
  return port
}

export function startScratchPostgres(): ScratchServer {
  const bin = pgBin()
  const dir = mkdtempSync(join(tmpdir(), 'vis-pg-'))
  chownSync(dir, idOf('-u', 'postgres'), idOf('-g', 'postgres'))
  const data = join(dir, 'data')
  const log = join(dir, 'pg.log')
  const asPostgres = (cmd: string, args: string[]) => {
    const r = spawnSync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { encoding: 'utf8' })
    if (r.status !== 0) {
      const tail = existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''
      throw new Error(`${cmd} failed (${r.status}): ${r.stderr}${r.stdout}\n${tail}`)
    }
  }
  try {
    asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'vis', '-E', 'UTF8', '--no-sync'])
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  let port = 0
  for (let attempt = 0; ; attempt++) {
    port = freePort()
    try {
      const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`
      asPostgres('pg_ctl', ['-D', data, '-w', '-t', '60', '-l', log, '-o', opts, 'start'])
      break
    } catch (err) {
      if (attempt >= 3) {
        rmSync(dir, { recursive: true, force: true })
        throw err
      }
    }
  }
  let databases = 0
  let stopped = false
  const url = (database: string) => `postgres://vis@127.0.0.1:${port}/${database}`
  return {
    port,
    dir,
    url,
    createDatabase(prefix = 'vis') {
      const name = `${prefix}_${process.pid}_${++databases}`
      const admin = new PgDatabase(url('postgres'))
      try {
        admin.exec(`CREATE DATABASE ${name}`)
      } finally {
        admin.close()
      }
      return url(name)
    },
    stop() {
      if (stopped) return
      stopped = true
      spawnSync('runuser', [
        '-u',
        'postgres',
        '--',
        join(bin, 'pg_ctl'),
        '-D',
        data,
        '-m',
        'immediate',
        'stop',
      ])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
