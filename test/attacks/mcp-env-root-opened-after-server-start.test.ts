// Attack (fourteenth outsider pass; surface: the MCP launch checks, src/mcp-client/launch.ts and
// server-env.ts, "at every start, as roots open later"). The env rule judges a server's variables against
// the roots open WHEN IT STARTS. A stdio server lives for its session's life, and roots keep opening: a
// server started while no root held its PYTHONPATH keeps that PYTHONPATH when another session (of this
// process or any other vis process) opens a root around it, and Python imports on demand (a plugin, a
// lazily imported backend, `importlib.import_module` per call). Nothing re-judges the running server nor
// refuses the new root, so the new session's sandbox writes a module the running server then imports on
// the host, unconfined. The very same server started now is refused.
//
// Reproduction: the person's server (outside every root) imports the module a tool call names, env
// PYTHONPATH=R/plugins. Session S1 (root W) connects it; session S2 opens on R and its block writes
// R/plugins/notes_plugin.py (appending to a marker outside R); S1 calls the tool; then S1 reconnects (the
// control: refused with mcp.launch-denied). Expected: the plugin never runs on the host (the running server
// is stopped or the root refused while it runs); the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import type { LaterRootSpec } from './fixtures/mcp-root-opened-later-host.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-root-later-'))
after(() => rmSync(base, { recursive: true, force: true }))
const fixture = join(import.meta.dirname, 'fixtures', 'mcp-root-opened-later-host.ts')

// A minimal MCP stdio server (newline-delimited JSON-RPC): one tool, `plugin`, that imports the module
// it is given and returns its RESULT.
const SERVER = `import importlib, json, sys
def send(o):
    sys.stdout.write(json.dumps(o) + "\\n")
    sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    method, i = m.get("method"), m["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "notes", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": i, "result": {"tools": [{"name": "plugin", "description": "Runs a notes plugin.", "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}]}})
    elif method == "tools/call":
        try:
            text = str(getattr(importlib.import_module(m["params"]["arguments"]["name"]), "RESULT", ""))
        except Exception as e:
            text = "error: %s" % e
        send({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": i, "result": {}})
`

test('a running MCP server whose env names a place in a root opened after its start does not load from it', () => {
  const W = join(base, 'work')
  const R = join(base, 'notes')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const serverDir = join(base, 'server')
  // The person's plugins folder exists when the server starts (Python never looks in a missing one again).
  for (const d of [W, R, join(R, 'plugins'), home, outside, serverDir]) mkdirSync(d)
  const server = join(serverDir, 'notes_server.py')
  writeFileSync(server, SERVER)
  const marker = join(outside, 'ran-on-the-host')
  const plugin = `import os\nopen(${JSON.stringify(marker)}, 'a').write('R/plugins/notes_plugin.py, written by the sandbox of a session opened after the server started, imported by the host\\n')\nRESULT = 'plugin ran in pid %d' % os.getpid()\n`
  const spec: LaterRootSpec = {
    W,
    R,
    home,
    server: { name: 'notes', command: 'python3', args: [server], env: { PYTHONPATH: `${R}/plugins` } },
    files: [{ path: 'plugins/notes_plugin.py', text: plugin }],
    call: 'print(await mcp_notes_plugin(name="notes_plugin"))',
    reconnect: [
      'try:',
      '    print(await mcp_connect("notes"))',
      'except Exception as e:',
      "    print('refused', getattr(e, 'code', ''), str(e)[:200])",
    ].join('\n'),
  }
  const r = spawnSync(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), fixture, JSON.stringify(spec)],
    {
      cwd: outside,
      env: { ...process.env, VIS_HOME: home },
      encoding: 'utf8',
      timeout: 240_000,
    },
  )
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /connect: .*notes/, `S1 connected the server before R was a root (${out})`)
  assert.match(out, /plant: planted/, out)
  assert.match(out, /reconnect: refused mcp\.launch-denied/, `a start after R opened is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `the server S1 started before R was a root kept PYTHONPATH=R/plugins after session S2 opened R, and ` +
      `imported the module S2's sandbox wrote: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} ` +
      `(${out.slice(0, 600)})`,
  )
})
