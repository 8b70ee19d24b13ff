// Attack (twelfth outsider pass; surface: the eleventh pass's private HOME for MCP stdio servers,
// src/mcp-client/server-home.ts, against Roots: "~/.vis itself is always protected, whatever VIS_HOME
// says" and "every vis home of the user ... masked inside a root"). Every vis process finds `~` through
// HOME (os.homedir()): the user's default home ~/.vis, the homes registry ~/.vis/homes and the live-jails
// folder all hang off it. When the host's HOME lies in a live session root (a workspace at $HOME, allowed)
// the host now starts each stdio server with HOME=<home>/mcp-servers/home. A server that is vis itself
// (`vis mcp --root ~` by absolute path, the README's own recommended launch) then takes that private folder
// for `~`: it knows neither the user's ~/.vis nor its registry nor the live jails, so its OWN confined
// session on ~ shows the real ~/.vis as an ordinary folder. A block there writes the outer vis home
// (extensions/*.py, mcp.json, trust records: run unconfined by the outer vis) and reads its database.
// Before the private HOME, the inner vis had HOME=~ and masked ~/.vis like every other vis process.
//
// Reproduction: a private HOME H for the process tree; an engine (home H/.vis) with mcp server
// `inner: node bin/vis.js mcp --root H`; a session on H; one block calls mcp_connect('inner') and runs
// Python through mcp_inner_python_execution that writes H/.vis/extensions/planted_by_inner.py.
// Expected: the inner session sees H/.vis masked (empty, read-only) and the write fails.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { homeAt, privateHomeLayout, runTsxHost } from './tsx-host.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-inner-vis-'))
after(() => rmSync(base, { recursive: true, force: true }))
const fixture = join(import.meta.dirname, 'fixtures', 'inner-vis-mcp-host.ts')
const visJs = join(import.meta.dirname, '..', '..', 'bin', 'vis.js')

test("vis started as an MCP server with the private HOME does not protect the user's ~/.vis", async () => {
  const { H, outside } = privateHomeLayout(base)
  const r = await runTsxHost(fixture, [H, visJs], outside, homeAt(H))
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /outer home as the inner sandbox sees it|inner: refused|connect:/, out)
  assert.ok(
    !existsSync(join(H, '.vis', 'extensions', 'planted_by_inner.py')),
    `the inner vis (HOME=<home>/mcp-servers/home) confined session on H wrote the outer vis home's extensions/ (${out.slice(0, 600)})`,
  )
})
