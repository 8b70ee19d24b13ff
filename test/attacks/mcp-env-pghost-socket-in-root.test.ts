// Attack (fifteenth outsider pass; surface: the name rule of src/mcp-client/server-env.ts, isLocationName).
// The fourteenth pass added SOCK for DOCKER_HOST=unix://...: a socket in a root is a server the sandbox runs.
// PGHOST carries no listed word and `PG` no listed prefix, yet libpq (psql, psycopg, node-postgres' native
// driver, every Postgres MCP server) reads a PGHOST that starts with `/` as the FOLDER of the server's Unix
// socket (`<PGHOST>/.s.PGSQL.<port>`), and a project-local socket folder is how dev shells run Postgres
// (`PGHOST=$PWD/.devenv/state/postgres`, nix and devenv templates). With a session on that project the
// block binds its own `.s.PGSQL.5432` there; the host's server connects to the block's "database", which
// asks for the password in clear text, and libpq sends PGPASSWORD (mcp.json's secret) to the sandbox,
// which also chooses every row the server then reads.
//
// Reproduction: session on W; servers `control` (env DB_SOCKET_DIR=W/pg: refused, DIR) and `pg` (node
// running `psql -w -c 'select 1'` at start, as a Postgres server connects at start; env PGHOST=W/pg,
// PGUSER=app, PGPASSWORD=<secret>). The block listens on W/pg/.s.PGSQL.5432 in a thread, answers the
// startup message with AuthenticationCleartextPassword, and prints the password it gets. Expected: `pg`
// refused with mcp.launch-denied; the block never sees the secret.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-pghost-')

test('PGHOST naming a socket folder in a root (a database the sandbox runs) is refused', () => {
  assert.ok(existsSync('/usr/bin/psql'), "this test needs libpq's psql (apt: postgresql-client)")
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [W, home, outside]) mkdirSync(d)
  const secret = 'mcp-json-db-secret-7f3a'
  const server = (env: Record<string, string>): Server => ({
    command: process.execPath,
    args: [
      '-e',
      "require('node:child_process').spawnSync('/usr/bin/psql', ['-w', '-c', 'select 1'], { timeout: 5000 }); " +
        'setTimeout(() => {}, 3000)',
    ],
    env,
    timeout_ms: 6_000,
  })
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server({ DB_SOCKET_DIR: `${W}/pg`, PGHOST: '/nonexistent' }),
      pg: server({ PGHOST: `${W}/pg`, PGUSER: 'app', PGDATABASE: 'app', PGPASSWORD: secret }),
    },
    [
      'import os, socket, struct, threading',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/pg', exist_ok=True)",
      's = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)',
      "s.bind(W + '/pg/.s.PGSQL.5432')",
      's.listen(4)',
      'got = []',
      'def serve():',
      '    while True:',
      '        c, _ = s.accept()',
      '        try:',
      "            n = struct.unpack('!I', c.recv(4))[0]",
      '            c.recv(n - 4)',
      "            c.sendall(b'R' + struct.pack('!II', 8, 3))",
      '            t = c.recv(1)',
      "            m = struct.unpack('!I', c.recv(4))[0]",
      "            got.append(c.recv(m - 4).rstrip(b'\\0').decode())",
      '        except Exception as e:',
      "            got.append('error ' + repr(e))",
      '        finally:',
      '            c.close()',
      'threading.Thread(target=serve, daemon=True).start()',
      "print('listening')",
      ...connectEach(['control', 'pg']),
      "print('password the block received:', got)",
    ],
  )
  assert.match(out, /listening/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `DB_SOCKET_DIR=W/pg is refused (${out})`)
  assert.ok(
    !out.includes(secret),
    `env PGHOST=W/pg passed the launch check (its name is not "like a location"): the host's psql connected ` +
      `to the block's socket W/pg/.s.PGSQL.5432 and sent it mcp.json's PGPASSWORD (${out.slice(-400)})`,
  )
  assert.match(out, /pg refused mcp\.launch-denied/, out)
})
