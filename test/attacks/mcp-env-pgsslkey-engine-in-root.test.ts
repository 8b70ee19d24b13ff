// Attack (sixteenth outsider pass; surface: the name rule of src/mcp-client/server-env.ts).
// libpq reads its client key from PGSSLKEY, and a value with a colon is `engine:key`: it calls OpenSSL's
// ENGINE_by_id(engine), whose dynamic engine dlopen()s the engine as a file when it holds a `/`
// (libpq's fe-secure-openssl.c; PostgreSQL's docs: "sslkey ... an external engine"). So
// PGSSLKEY=W/tools/engine.so:key makes every libpq client a server runs (psql, psycopg, a Postgres MCP
// server) load the block's shared object into a host process as soon as the server answers the TLS
// request. PGSSLKEY carries none of the rule's words (CERT, FILE, HOST... but no KEY), so its value is never
// read; the same `sslkey` given in DATABASE_URL (URL) is refused.
//
// Reproduction: the test builds a shared object whose constructor appends to a marker outside W (gcc)
// and a client certificate outside W (openssl). Session on W; servers `control` (env DATABASE_URL with
// `?sslkey=W/tools/engine.so:key`) and `engine` (env PGSSLKEY=W/tools/engine.so:key, PGSSLCERT outside
// every root), each a node process that answers a Postgres SSLRequest with 'S' on a loopback port and runs
// psql against it. The block copies the shared object into W/tools/engine.so and connects both.
// Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, landed, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-pgsslkey-')

// A Postgres server as far as libpq's TLS start: it answers the SSLRequest with 'S' (TLS accepted), by
// which time libpq has loaded the client key's engine. Then psql is run against it with the server's env.
const client = [
  "const net = require('node:net'), { spawn } = require('node:child_process')",
  "const srv = net.createServer((c) => { c.once('data', () => c.write('S')); c.on('error', () => {}) })",
  "srv.listen(0, '127.0.0.1', () => {",
  "  const p = spawn('/usr/bin/psql', ['-h', '127.0.0.1', '-p', String(srv.address().port), '-U', 'x', '-d', 'x', '-c', 'select 1'], { stdio: 'ignore', env: { ...process.env, PGCONNECT_TIMEOUT: '3' } })",
  '  setTimeout(() => { p.kill(); srv.close() }, 4000)',
  '})',
].join('\n')

test('PGSSLKEY=<a shared object in a root>:key is refused', () => {
  for (const tool of ['/usr/bin/psql', '/usr/bin/gcc', '/usr/bin/openssl'])
    assert.ok(existsSync(tool), `this test needs ${tool}`)
  const { W, home, outside, marker } = attackFolders(base)
  const source = join(outside, 'engine.c')
  const built = join(outside, 'engine.so')
  writeFileSync(
    source,
    '#include <stdio.h>\n' +
      '__attribute__((constructor)) static void planted(void) {\n' +
      `  FILE *f = fopen(${JSON.stringify(marker)}, "a");\n` +
      '  if (f) { fputs("W/tools/engine.so, written by the block, loaded on the host by libpq\\n", f); fclose(f); }\n' +
      '}\n',
  )
  const cc = spawnSync('/usr/bin/gcc', ['-shared', '-fPIC', '-o', built, source], { encoding: 'utf8' })
  assert.equal(cc.status, 0, cc.stderr)
  const cert = join(outside, 'client.pem')
  const req = spawnSync(
    '/usr/bin/openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=client',
      '-days',
      '1',
      '-keyout',
      join(outside, 'client.key'),
      '-out',
      cert,
    ],
    { encoding: 'utf8' },
  )
  assert.equal(req.status, 0, req.stderr)
  const server = (env: Record<string, string>): Server => ({
    command: process.execPath,
    args: ['-e', client],
    env,
    timeout_ms: 7_000,
  })
  const engine = `${W}/tools/engine.so`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server({ DATABASE_URL: `postgresql://127.0.0.1/x?sslcert=${cert}&sslkey=${engine}:key` }),
      engine: server({ PGSSLCERT: cert, PGSSLKEY: `${engine}:key` }),
    },
    [
      'import os, base64',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/tools', exist_ok=True)",
      `open(W + '/tools/engine.so', 'wb').write(base64.b64decode(${JSON.stringify(readFileSync(built).toString('base64'))}))`,
      "print('planted')",
      ...connectEach(['control', 'engine']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `DATABASE_URL ...?sslkey=W/... is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    'env PGSSLKEY="W/tools/engine.so:key" passed the launch check (no word of the name rule in PGSSLKEY) and ' +
      "the host's psql loaded the block's shared object as an OpenSSL engine: " +
      `${landed(marker)} (${out.slice(0, 500)})`,
  )
  assert.match(out, /engine refused mcp\.launch-denied/, out)
})
