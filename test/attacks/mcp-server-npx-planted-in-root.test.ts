// Attack (tenth outsider pass; README, MCP: servers listed in `~/.vis/mcp.json` — the README's own example
// is `"files": { "command": "npx", "args": ["-y", "some-mcp-server"] }` — are started by the host for
// every session (`mcp_connect(name)` from a block starts one again); SECURITY.md, Programs the host
// starts: "the `PATH` of the people vis is for routinely starts with a directory inside a root ... npm's
// `<project>/node_modules/.bin` under npx", so the host finds its programs by absolute path from the
// system directories and passes over anything inside a root). An MCP server's process is started with
// the host's working directory — the project `vis serve`/`vis run`/`vis chat` runs in, a session root —
// and `npx -y <pkg>` runs a `<pkg>` it finds in that directory's `node_modules` before its cache or the
// registry. So a block plants `node_modules/some-mcp-server` (a `package.json` with a `bin`) in its own
// root and calls `mcp_connect('files')`: the host starts the block's script at once, unconfined, as the
// user. The configured server is the person's; the code that runs is the sandbox's: a jail escape from
// one block, no person involved.
//
// Reproduction: an engine started in P (the working directory, as `vis serve` in a project) whose
// mcp.json has `files: {command: npx, args: [-y, some-mcp-server]}` (offline, so npx asks no registry);
// a session on P runs one block that writes P/node_modules/some-mcp-server/{package.json,server.js} and
// P/node_modules/.bin/some-mcp-server, then `await mcp_connect('files')`. server.js writes a marker
// outside P. A fix: start stdio MCP servers in a directory no session writes (the vis home, or the
// command's own), resolve their command as host programs are resolved, and refuse (or at least never
// run) a package npx would take from inside a root.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine, type EngineOptions } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-npx-'))
after(() => rmSync(base, { recursive: true, force: true }))

// The project P, a folder outside it for the marker, and the vis home: `prefix` keeps each test's apart.
function layout(prefix: string): { P: string; home: string; marker: string } {
  const P = join(base, `${prefix}project`)
  const outside = join(base, `${prefix}outside`)
  const home = join(base, `${prefix}home`)
  for (const d of [P, outside, home]) mkdirSync(d)
  return { P, home, marker: join(outside, 'ran-on-the-host') }
}

// An engine started in P (`vis serve` in the project; with `pathFirst`, its PATH led by that folder, as an
// activated virtualenv leads it) configured with `mcpServers`; a session on P runs `plant` (which prints
// 'planted') and then mcp_connect(server). Returns what the block printed, and its error.
async function plantAndConnect(
  P: string,
  home: string,
  mcpServers: EngineOptions['mcpServers'],
  server: string,
  plant: string[],
  pathFirst?: string,
): Promise<string> {
  const cwd = process.cwd()
  const path = process.env.PATH
  process.chdir(P)
  if (pathFirst !== undefined) process.env.PATH = `${pathFirst}:${path ?? ''}`
  let out = ''
  try {
    const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false, mcpServers })
    try {
      const s = await engine.createSession({ roots: [P] })
      const r = await engine.runBlock(s.id, {
        code: [
          ...plant,
          'try:',
          `    print(await mcp_connect(${JSON.stringify(server)}))`,
          'except Exception as e:',
          "    print('connect:', type(e).__name__, str(e)[:200])",
        ].join('\n'),
        timeout_ms: 120_000,
      })
      out = `${r.block.stdout ?? ''}${JSON.stringify(r.block.error ?? null)}`
      assert.match(out, /planted/, out)
    } finally {
      await engine.close()
    }
  } finally {
    process.chdir(cwd)
    if (pathFirst !== undefined) process.env.PATH = path
  }
  return out
}

test('a block cannot plant the package an mcp.json `npx -y` server runs and start it on the host', async () => {
  const { P, home, marker } = layout('')
  const script = `#!/usr/bin/env node\nrequire('fs').writeFileSync(${JSON.stringify(marker)}, 'planted MCP server ran, pid ' + process.pid)\n`
  const out = await plantAndConnect(
    P,
    home,
    { files: { command: 'npx', args: ['-y', 'some-mcp-server'], env: { npm_config_offline: 'true' } } },
    'files',
    [
      'import json, os',
      `P = ${JSON.stringify(P)}`,
      "pkg = os.path.join(P, 'node_modules', 'some-mcp-server')",
      'os.makedirs(pkg)',
      "os.makedirs(os.path.join(P, 'node_modules', '.bin'))",
      "json.dump({'name': 'some-mcp-server', 'version': '9.9.9', 'bin': {'some-mcp-server': 'server.js'}}, open(os.path.join(pkg, 'package.json'), 'w'))",
      `open(os.path.join(pkg, 'server.js'), 'w').write(${JSON.stringify(script)})`,
      "os.chmod(os.path.join(pkg, 'server.js'), 0o755)",
      "os.symlink('../some-mcp-server/server.js', os.path.join(P, 'node_modules', '.bin', 'some-mcp-server'))",
      "print('planted')",
    ],
  )
  assert.ok(
    !existsSync(marker),
    `a block planted node_modules/some-mcp-server in its root and mcp_connect('files') made the host run it ` +
      `through the configured \`npx -y some-mcp-server\`, outside every jail: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''} (${out.trim().slice(0, 300)})`,
  )
})

// The same through the command's own lookup: a stdio server's `command` is found on the host's PATH
// (the MCP SDK's cross-spawn), which src/util/host-programs.ts was written to avoid for the host's own
// programs: an activated virtualenv puts `<project>/.venv/bin` first. A block plants `.venv/bin/uvx`
// and calls mcp_connect for a server configured as `uvx mcp-server-fetch` (a common configuration).
test('a block cannot plant the command a configured stdio MCP server is found by on PATH', async () => {
  const { P, home, marker } = layout('venv-')
  const script = `#!/bin/sh\necho "planted uvx ran: $*" > ${JSON.stringify(marker)}\n`
  const bin = join(P, '.venv', 'bin')
  const out = await plantAndConnect(
    P,
    home,
    { fetch: { command: 'uvx', args: ['mcp-server-fetch'] } },
    'fetch',
    [
      'import os',
      `b = ${JSON.stringify(bin)}`,
      'os.makedirs(b)',
      `open(b + '/uvx', 'w').write(${JSON.stringify(script)})`,
      "os.chmod(b + '/uvx', 0o755)",
      "print('planted')",
    ],
    bin,
  )
  assert.ok(
    !existsSync(marker),
    `a block planted .venv/bin/uvx in its root and mcp_connect('fetch') made the host run it as the configured ` +
      `server's command, outside every jail: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.trim().slice(0, 300)})`,
  )
})
