// Attack (twelfth outsider pass; surface: the MCP stdio launch checks, src/mcp-client/launch.ts and
// server-home.ts). "A command inside a root is refused (mcp.launch-denied)", and the eleventh pass refuses
// env locations inside a root, but only the configuration ones (HOME, XDG_*_HOME, PYTHONUSERBASE,
// PIP_CONFIG_FILE, UV_CONFIG_FILE, npm_config_*): the variables that name where a server's CODE is loaded
// from are not judged. A server run from source, as MCP servers' READMEs commonly configure it
// (`"command": "python3", "args": ["-m", "pkg"], "env": {"PYTHONPATH": "/path/to/project/src"}`), with the
// project a session root, imports the module the block wrote, on the host. Naming the same file as
// `command` is refused; naming its folder in PYTHONPATH is not. (NODE_PATH, NODE_OPTIONS=--require/--import
// and PYTHONHOME are the same gap; UV_CACHE_DIR/UV_TOOL_DIR, uv's analogues
// of the refused npm_config_cache, are left out too.)
//
// Reproduction: session on W; servers `direct` (command W/src/notes_server.py, the control) and `viaenv`
// (python3 -m notes_server, env PYTHONPATH=W/src). The block writes W/src/notes_server.py and connects
// both. Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-codepath-'))
after(() => rmSync(base, { recursive: true, force: true }))
const fixture = join(import.meta.dirname, 'fixtures', 'mcp-env-code-path-host.ts')

test('PYTHONPATH into a root in mcp.json env is refused like a command inside a root', () => {
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, W, home, marker], {
    cwd: outside,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 240_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /control: mcp\.launch-denied/, `the same file as the command is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `env PYTHONPATH=W/src passed the launch check and the host's python3 imported the block's ` +
      `W/src/notes_server.py: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''} (${out.slice(0, 400)})`,
  )
})
